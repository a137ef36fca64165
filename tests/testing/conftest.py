"""Fixtures for the pytest plugin's tests: a loopback judge and inner pytest runs (pytester).

The judge is the fake OpenAI server of tests/models on 127.0.0.1, answering the AspectCritic
prompt "yes" or "no" by the response it is shown: a response starting "good" passes, "bad"
fails, and "flaky <n>" answers from a script cycled per request, so repeated judgements of one
row can disagree. Inner runs talk to it through the real client, cache and engine.

Inner runs are in-process (pytester restores `sys.modules` after each, so the library and
scipy are imported here once, not once per inner run); the run that checks what loading the
plugin imports, and the xdist run, are subprocesses.
"""

from __future__ import annotations

import collections
import re
import textwrap
import threading
from collections.abc import Iterator, Sequence

import openai  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

import assay.metrics.general
import assay.testing  # noqa: F401
from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    Reply,
    completion_payload,
)

pytest_plugins = ["pytester"]


class Verdicts(Behaviour):
    """ "yes"/"no" by the text inside <response>; "flaky" responses follow their script."""

    def __init__(self) -> None:
        self.scripts: dict[str, Sequence[str]] = {}
        self.asked: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def respond(self, request: RecordedRequest) -> Reply:
        match = re.search(r"<response>\n(.*?)\n</response>", request.last_user_text, re.DOTALL)
        response = match.group(1) if match else ""
        with self._lock:
            count = self.asked[response]
            self.asked[response] += 1
        if response in self.scripts:
            script = self.scripts[response]
            answer = script[count % len(script)]
        else:
            answer = "yes" if response.startswith("good") else "no"
        return Reply(200, completion_payload(request, [answer], (20, 1), "stop"))


@pytest.fixture(autouse=True)
def _no_ci_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs must not write to the real CI job summary when these tests run in CI."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def judge_server() -> Iterator[tuple[FakeOpenAI, Verdicts]]:
    verdicts = Verdicts()
    with FakeOpenAI() as server:
        server.default = verdicts
        yield server, verdicts


INNER_HEADER = '''
import pytest
from assay.metrics.general import AspectCritic
from assay.testing import assert_case, assert_in_range, assert_scores

CRITIC = AspectCritic(name="helpful", definition="Is the response helpful?")


def rows(good, bad, flaky=0, prefix="r"):
    """good/bad/flaky rows with ids."""
    made = [f"good answer {i}" for i in range(good)] + [f"bad answer {i}" for i in range(bad)]
    made += [f"flaky {i}" for i in range(flaky)]
    return [{"id": f"{prefix}{i}", "user_input": f"question {i}", "response": text}
            for i, text in enumerate(made)]
'''


def inner(body: str) -> str:
    """An inner test module: the shared header, then `body`."""
    return INNER_HEADER + "\n" + textwrap.dedent(body)


# Plugins the inner runs do not need; hypothesis's imports hypothesis at every session's end.
QUIET_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:langsmith_plugin")


def judge_args(server: FakeOpenAI, tmp_path, *extra: str) -> list[str]:
    return [
        f"--assay-judge={server.model_string('judge')}",
        f"--assay-cache-path={tmp_path / 'cache.sqlite'}",
        *QUIET_PLUGINS,
        *extra,
    ]
