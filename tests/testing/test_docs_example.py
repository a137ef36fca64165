"""The runnable example of docs/pytest.md runs as written (a loopback judge that says "yes")."""

from __future__ import annotations

import re
from pathlib import Path

from tests.models.fake_openai import FakeOpenAI, ok
from tests.testing.conftest import QUIET_PLUGINS

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"


def test_the_guides_example_passes_with_a_judge_that_agrees(pytester, tmp_path):
    example = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert example is not None
    pytester.makepyfile(test_quality=example.group(1))
    with FakeOpenAI() as server:
        server.default = ok("yes")
        result = pytester.runpytest(
            *QUIET_PLUGINS,
            f"--assay-judge={server.model_string('judge')}",
            f"--assay-cache-path={tmp_path / 'cache.sqlite'}",
            "--assay-summary=summary.md",
        )
        result.assert_outcomes(passed=3)
        # 20 rows judged once (20/20 clears 0.8 at once); the case: two agreeing judgements
        assert server.count == 22
    summary = (pytester.path / "summary.md").read_text()
    assert "| `test_quality.py::test_exact_answers` | exact_match | >=0.9 | 1.000 |" in summary
