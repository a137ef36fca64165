"""Which metric and judge a criterion's scores come from, and that judge's reliability card.

A score records what produced it in `source`: `judge:<model>` (a review queue's judge),
`evaluator:<name>@v<version>` (an online evaluator, whose judge model is on its row),
`function:<name>` (a string match, no judge), `key:<id>` or `key:<id>:<given>` (sent through the
API; a given source of the form `judge:<model>` names the judge, and one of an uploaded
`EvaluationResult`, `assay:<run id>;config=...;judge=...`, names the judge's identity and the
metric's configuration: `assay.platform.judge_source`), `otel:<span>` (an OTLP evaluation event). The criterion runs as the library's `Criteria` metric built from the saved
criterion of that name, or, with no saved criterion, as the assay metric of that id
(`faithfulness`, ...) when there is one.

The card is `assay.benchmark.cards.judge_card(metric, judge)`: one measured for exactly that
metric configuration and judge, or none (an uploaded run whose metric was configured otherwise
than the criterion runs has none). When none is known the answer says so and why ("no card
for this judge"); a card is never borrowed from another judge or configuration.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from typing import Any

from assay.platform import criteria_rules
from assay.platform.judge_source import UploadedJudge, configuration_digest, read_upload_source
from assay.platform.server.schemas.model_names import routed
from assay.platform.server.storage import models

NO_CARD = "no card for this judge"


@dataclass(frozen=True)
class Producer:
    """What a score's source says produced it: `kind` is judge, function or unknown; `model` the
    judge's model string when known ('' is the server's default judge)."""

    kind: str
    model: str | None = None
    via: str = ""  # how it was found, in words
    identity: tuple[tuple[str, Any], ...] | None = None  # the judge's identity, when given whole
    config: str | None = None  # the digest of the metric's configuration it scored with


def _uploaded(found: UploadedJudge) -> Producer:
    run = f"assay run {found.run_id}"
    if found.no_judge:
        return Producer("function", via=f"an uploaded {run}, whose metric asks no judge")
    if found.identity is None:
        return Producer("unknown", via=f"an uploaded {run} that does not name its judge")
    name = str(found.identity.get("model") or found.identity.get("provider") or "a judge")
    return Producer(
        "judge",
        name,
        f"an uploaded {run}, judged by {name}",
        tuple(sorted(found.identity.items())),
        found.config,
    )


def producer_of(source: str, evaluator_judges: dict[str, str]) -> Producer:
    """Read a score's `source`."""
    if source.startswith("key:"):
        given = source.split(":", 2)[2] if source.count(":") >= 2 else ""
        if given.startswith("judge:"):
            return Producer("judge", given[len("judge:") :], "the source the score was sent with")
        uploaded = read_upload_source(given)
        if uploaded is not None:
            return _uploaded(uploaded)
        return Producer("unknown", via="scores sent through the API without naming their judge")
    if source.startswith("judge:"):
        return Producer("judge", source[len("judge:") :], "a review queue's judge")
    if source.startswith("evaluator:"):
        name = source[len("evaluator:") :].rsplit("@v", 1)[0]
        if name in evaluator_judges:
            return Producer("judge", evaluator_judges[name], f"online evaluator {name!r}")
        return Producer("unknown", via=f"online evaluator {name!r}, which no longer exists")
    if source.startswith("function:"):
        return Producer("function", via="a function criterion (a string match)")
    if source.startswith("otel:"):
        return Producer("unknown", via="OTLP evaluation events, which do not name their judge")
    return Producer("unknown", via=f"source {source!r}")


def evaluator_names(sources: list[str]) -> list[str]:
    return sorted(
        {s[len("evaluator:") :].rsplit("@v", 1)[0] for s in sources if s.startswith("evaluator:")}
    )


def metric_of(criterion: str, saved: models.Criteria | None) -> tuple[Any, str]:
    """The library metric the criterion runs as, and its description; (None, why) when none."""
    if saved is not None:
        from assay.metrics.criteria import Criteria as LibraryCriteria

        if saved.criteria_type == "function":
            return None, "a function criterion (a string match): no judge"
        fields = {f: getattr(saved, f) for f in criteria_rules.FIELDS if f != "validation_status"}
        return LibraryCriteria(**fields), "the saved criterion, as assay's Criteria metric"
    from assay.errors import AssayError
    from assay.metrics.registry import create_metric

    try:
        return create_metric(criterion), f"assay's {criterion} metric, default configuration"
    except (AssayError, KeyError, TypeError, ValueError):
        return None, "neither a saved criterion nor an assay metric"


def _judge_identity(model: str) -> dict[str, Any]:
    from assay.benchmark.cards import default_judge_identity

    return dict(_named_identity(routed(model))) if model.strip() else default_judge_identity()


@functools.lru_cache(maxsize=256)
def _named_identity(model: str) -> tuple[tuple[str, Any], ...]:
    # reading a model string looks through the installed providers' entry points (~40 ms)
    from assay.benchmark.cards import model_string_identity

    return tuple(model_string_identity(model).items())


@dataclass(frozen=True)
class _Judge:
    """A judge as `judge_card` reads it: only its identity (no model is built)."""

    known: dict[str, Any]

    def identity(self) -> dict[str, Any]:
        return self.known


def _digest(metric: Any) -> str:
    from assay.benchmark.cards import configuration

    return configuration_digest(*configuration(metric))


def card_json(card: Any) -> dict[str, Any]:
    """A card as the API answers it: the judge, agreement and stability figures, unmeasured."""

    def figure(m: Any) -> dict[str, Any]:
        return {
            "figure": m.figure,
            "label": m.label,
            "value": m.value,
            "low": m.low,
            "high": m.high,
            "n": m.n,
            "suite": m.suite,
            "split": m.split,
            "date": m.date,
            "method": m.method,
        }

    return {
        "metric": card.metric,
        "judge": dict(card.judge),
        "headline": card.headline(),
        "agreement": [figure(m) for m in card.agreement],
        "stability": [figure(m) for m in card.stability],
        "unmeasured": list(card.unmeasured),
    }


def judge_of(
    criterion: str,
    sources: dict[str, int],
    saved: models.Criteria | None,
    evaluator_judges: dict[str, str],
) -> tuple[dict[str, Any], Any]:
    """The `judge` part of a criterion's trust figures (what its scores come from and its card,
    or why there is none) and the `JudgeCard` itself (None when none is known). `sources` counts
    the sources of the criterion's latest scores; the most frequent one decides."""
    from assay.benchmark.cards import judge_card

    counts = Counter({source: n for source, n in sources.items() if n > 0})
    answer: dict[str, Any] = {
        "sources": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "model": None,
        "identity": None,
        "metric": None,
        "runs_as": None,
        "card": None,
        "no_card": None,
    }
    if not counts:
        answer["no_card"] = f"{NO_CARD}: no score of this criterion in the range"
        return answer, None
    source = min(counts, key=lambda s: (-counts[s], s))  # ties: the same one every time
    producer = producer_of(source, evaluator_judges)
    answer["found_by"] = producer.via
    if producer.kind != "judge" or producer.model is None:
        answer["no_card"] = f"{NO_CARD}: the scores come from {producer.via}"
        return answer, None
    answer["model"] = producer.model
    try:
        identity = (
            dict(producer.identity)
            if producer.identity is not None
            else _judge_identity(producer.model)
        )
    except Exception as exc:  # a model string the library cannot read: say so, never guess
        answer["no_card"] = f"{NO_CARD}: the judge {producer.model!r} is not understood ({exc})"
        return answer, None
    answer["identity"] = identity
    metric, runs_as = metric_of(criterion, saved)
    answer["runs_as"] = runs_as
    if metric is None:
        answer["no_card"] = f"{NO_CARD}: the criterion is {runs_as}"
        return answer, None
    answer["metric"] = metric.name
    if producer.config is not None and producer.config != _digest(metric):
        answer["no_card"] = (
            f"{NO_CARD}: the uploaded run's {criterion} was configured otherwise (other "
            f"parameters or prompts) than {runs_as}, the configuration cards are looked up for"
        )
        return answer, None
    card = judge_card(metric, _Judge(identity))
    if card is None:
        answer["no_card"] = (
            f"{NO_CARD}: nothing was measured for {runs_as} judged by "
            f"{identity.get('model') or producer.model}"
        )
        return answer, None
    answer["card"] = card_json(card)
    return answer, card


__all__ = ["NO_CARD", "Producer", "card_json", "evaluator_names", "judge_of", "producer_of"]
