"""Results uploaded with `upload_result` name the judge that scored each metric, and the trust
panel reads it (SQLite and PostgreSQL, a real `assay serve` on 127.0.0.1, a scripted judge):
a faithfulness run scored by a judge with the embedded judge's identity shows the embedded
judge's card in `GET /api/v1/dashboard`'s `trust` and on the criterion page; a judge nothing was
measured for, a metric that asks no judge, another configuration of the metric and an upload
that names no judge each say why there is no card."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest

import assay.platform as ragmetrics
from assay import Faithfulness, evaluate
from assay.benchmark.cards import embedded_judge_identity, judge_card
from assay.metrics.classic import ExactMatch
from assay.models import LLM, ScriptedProvider
from assay.platform.judge_source import SOURCE_MAX, read_upload_source, upload_source
from assay.platform.sdk.result_export import upload_result
from assay.platform.server.storage.trust_cards import NO_CARD, judge_of
from assay.schema.result import EvaluationResult
from tests.metrics.rag.scripted import verdict_lines
from tests.platform.ui.conftest import make_user, sign_in

CONTEXTS = ["Paris is the capital of France. Madrid is the capital of Spain."]


class EmbeddedStandIn(ScriptedProvider):
    """A scripted judge that says it is the embedded judge (no model is loaded)."""

    def identity(self) -> dict[str, Any]:
        return embedded_judge_identity()


def _run(provider: ScriptedProvider) -> EvaluationResult:
    rows = [
        {
            "user_input": f"Capital of {country}?",
            "response": f"{city} is the capital of {country}.",
            "reference": f"{city}.",
            "retrieved_contexts": CONTEXTS,
        }
        for country, city in (("France", "Paris"), ("Spain", "Madrid"), ("Italy", "Rome"))
    ]
    return evaluate(rows, [ExactMatch(), Faithfulness(llm=LLM(provider))], show_progress=False)


def _uploaded(live: Any, provider: ScriptedProvider) -> tuple[Any, EvaluationResult]:
    user = make_user(live)
    assert ragmetrics.login(user.key, base_url=live.base_url) is True
    result = _run(provider)
    assert upload_result(result).scores_sent == 6
    return user, result


def _trust(user: Any) -> dict[str, Any]:
    answer = user.api().get("/dashboard", params={"range": "7d"})
    assert answer.status_code == 200, answer.text
    return answer.json()["trust"]


def _page_text(user: Any, criterion: str) -> str:
    page = sign_in(user).get(f"{user.base}/criterion", params={"name": criterion})
    assert page.status_code == 200, page.text
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text)))


def test_an_uploaded_result_shows_the_card_of_the_judge_that_scored_it(live):
    user, result = _uploaded(live, EmbeddedStandIn([verdict_lines("yes")], repeat_last=True))
    expected = judge_card(Faithfulness(), LLM(EmbeddedStandIn([])))
    assert expected is not None  # the package ships the embedded judge's faithfulness card

    trust = _trust(user)
    faith = trust["faithfulness"]["judge"]
    assert faith["no_card"] is None, faith
    assert faith["card"]["headline"] == expected.headline()
    assert faith["model"] == embedded_judge_identity()["model"]
    assert faith["identity"] == embedded_judge_identity()
    assert faith["metric"] == "faithfulness"
    assert str(result.run_id) in faith["found_by"]

    exact = trust["exact_match"]["judge"]
    assert exact["card"] is None
    assert exact["no_card"] == (
        f"{NO_CARD}: the scores come from an uploaded assay run {result.run_id}, "
        "whose metric asks no judge"
    )

    text = _page_text(user, "faithfulness")
    assert f"Reliability card of faithfulness with {expected.judge['model']}" in text
    assert expected.agreement[0].label in text
    assert "no card for this judge" not in text.lower()


def test_an_uploaded_result_of_an_unmeasured_judge_says_why_there_is_no_card(live):
    user, _result = _uploaded(live, ScriptedProvider([verdict_lines("yes")], repeat_last=True))
    faith = _trust(user)["faithfulness"]["judge"]
    assert faith["card"] is None
    assert faith["identity"] == {"provider": "scripted", "model": "scripted"}
    assert faith["no_card"] == (
        f"{NO_CARD}: nothing was measured for assay's faithfulness metric, default "
        "configuration judged by scripted"
    )
    assert "No card for this judge: nothing was measured" in _page_text(user, "faithfulness")


def _spec(**changes: Any) -> dict[str, Any]:
    spec = Faithfulness(llm=LLM(EmbeddedStandIn([]))).spec()
    return {**spec, **changes}


def _judge(source: str) -> dict[str, Any]:
    answer, _card = judge_of("faithfulness", {f"key:7:{source}": 3}, None, {})
    return answer


def test_a_card_is_never_borrowed_from_another_configuration_or_an_unnamed_judge():
    assert _judge(upload_source("r1", _spec()))["card"] is not None
    other = _spec(params={**_spec()["params"], "statements_per_call": 5})
    assert _judge(upload_source("r1", other))["no_card"] == (
        f"{NO_CARD}: the uploaded run's faithfulness was configured otherwise (other parameters "
        "or prompts) than assay's faithfulness metric, default configuration, the configuration "
        "cards are looked up for"
    )
    # uploaded before uploads named their judge
    assert _judge("assay:r1")["no_card"] == (
        f"{NO_CARD}: the scores come from an uploaded assay run r1 that does not name its judge"
    )
    # an identity too long for the score's source is left out, never cut short
    huge = _spec(llm={"provider": "scripted", "model": "m" * SOURCE_MAX})
    assert upload_source("r1", huge) == "assay:r1"
    found = read_upload_source(upload_source("r1", _spec()))
    assert found is not None and found.identity == embedded_judge_identity()


@pytest.mark.parametrize("given", ["assay:r1;judge={not json", "assay:r1;judge=[1]"])
def test_a_garbled_judge_in_a_source_names_no_judge(given):
    assert "does not name its judge" in _judge(given)["no_card"]
