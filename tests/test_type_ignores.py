"""Every `# type: ignore` in the library names its error code and says why.

mypy checks the library (strict in the core: `[tool.mypy]` in pyproject.toml, run by CI). A
silenced error is allowed only as `# type: ignore[code]  # reason`: the code keeps the ignore from
hiding other errors on the line (mypy's `ignore-without-code` also checks that), and the reason
tells the next reader whether it can go.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

IGNORE = re.compile(r"type:\s*ignore")
# `# type: ignore[code, code]  # reason`: at least one code, then a comment of a few words
WELL_FORMED = re.compile(
    r"^#\s*type:\s*ignore\[[a-z][a-z0-9-]*(,\s*[a-z][a-z0-9-]*)*\]\s+#\s*\S.{4,}$"
)


def ignores(path: Path) -> list[tuple[int, str]]:
    """The comments of `path` that hold a `type: ignore`, with their line numbers."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [
        (token.start[0], token.string.strip())
        for token in tokens
        if token.type == tokenize.COMMENT and IGNORE.search(token.string)
    ]


def test_every_type_ignore_has_a_code_and_a_reason() -> None:
    bad = [
        f"{path.relative_to(SRC)}:{line}: {comment}"
        for path in sorted(SRC.rglob("*.py"))
        for line, comment in ignores(path)
        if not WELL_FORMED.match(comment)
    ]
    assert not bad, "a `# type: ignore` without `[code]  # reason`:\n" + "\n".join(bad)


def test_the_check_sees_what_it_should(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "a = 1  # type: ignore\n"
        "b = 2  # type: ignore[assignment]\n"
        "c = 3  # type: ignore[assignment]  # the SDK's stubs say int\n"
        'd = "# type: ignore"\n',
        encoding="utf-8",
    )
    found = ignores(sample)
    assert [line for line, _ in found] == [1, 2, 3]  # not the string on line 4
    assert [bool(WELL_FORMED.match(comment)) for _, comment in found] == [False, False, True]
