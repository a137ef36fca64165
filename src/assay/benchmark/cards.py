"""Judge reliability cards: what was measured about a metric with a judge, and what was not.

A card belongs to one metric in its default configuration (its parameters, its version and the
exact wording of its prompts, by content hash) and one judge model. It lists the agreement with
human labels measured by `assay benchmark` on public sets (each figure with its interval, n, date
and the result file it comes from) and the stability of repeated asks, and it names every kind
of evidence that is missing as "unmeasured": a card never implies what nobody measured.

Cards are built, never written by hand: `build_cards(results_dir)` reads the committed benchmark
records (`benchmarks/results/*.json`) and keeps those that measured exactly this configuration;
`assay cards build` writes them to the file shipped with the package (`judge_cards.json`), which
`judge_card(metric, llm)` and `assay cards` read. A metric whose prompts or parameters were
changed, or a judge with no card, gets None: its reliability is unknown, not borrowed.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import DataError

CARDS_FILE = Path(__file__).with_name("judge_cards.json")
# The metrics the README's first command evaluates: each gets a card, measured or not.
CORE_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "factual_correctness",
)
# Kinds of evidence a card reports on; those with no measurement are listed as unmeasured.
EVIDENCE = {
    "agreement": "agreement with human labels on a public benchmark",
    "stability": "stability when the same cells are asked again (decisions that flip, spread)",
    "languages": "agreement in languages other than English",
}


@dataclass(frozen=True)
class Measurement:
    """One figure of one benchmark run: `label` (e.g. "ROC-AUC") = `value` [low, high] over n."""

    suite: str
    split: str
    figure: str
    label: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    date: str
    source: str  # the result file, relative to the results directory

    def text(self) -> str:
        shown = "undefined" if self.value is None else f"{self.value:.3f}"
        interval = (
            f" [{self.low:.3f}, {self.high:.3f}]"
            if self.low is not None and self.high is not None
            else ""
        )
        return f"{self.label} {shown}{interval} on {self.suite} ({self.split}, n={self.n}, {self.date})"


@dataclass(frozen=True)
class JudgeCard:
    """What is known about `metric` (in its default configuration) judged by `judge`."""

    metric: str
    judge: dict[str, Any]  # provider, model (and bytes, for a local file)
    params: dict[str, Any]
    prompts: dict[str, str]  # prompt id -> content hash
    agreement: list[Measurement] = field(default_factory=list)
    stability: list[Measurement] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)

    def headline(self) -> str:
        """One line for a summary: the best-measured agreement figure, or 'unmeasured'."""
        if not self.agreement:
            return f"{self.metric} with {self.judge.get('model')}: agreement with people unmeasured"
        best = max(self.agreement, key=lambda m: (m.split == "test", m.n))  # held-out first
        return f"{self.metric} with {self.judge.get('model')}: {best.text()}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeCard:
        return cls(
            metric=data["metric"],
            judge=dict(data["judge"]),
            params=dict(data["params"]),
            prompts=dict(data["prompts"]),
            agreement=[Measurement(**m) for m in data.get("agreement", [])],
            stability=[Measurement(**m) for m in data.get("stability", [])],
            unmeasured=list(data.get("unmeasured", [])),
        )


# -- what the current code would measure ------------------------------------------------------
def configuration(metric: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """(parameters, prompt id -> hash) of a metric as it stands, JSON-normalised."""
    spec = metric.spec()
    params = json.loads(json.dumps(spec.get("params") or {}, sort_keys=True, default=str))
    prompts = {p["id"]: p["hash"] for p in spec.get("prompts") or []}
    return params, prompts


def embedded_judge_identity() -> dict[str, Any]:
    """The identity of the judge that ships with assay (what `provider='local'` runs by default)."""
    from assay.models.local_weights import DEFAULT_JUDGE

    return {"provider": "local", "model": DEFAULT_JUDGE.filename, "bytes": DEFAULT_JUDGE.size}


def model_string_identity(model: str) -> dict[str, Any]:
    """The identity a model string names, without building the model."""
    from assay.models.factory import parse_model_string

    kind, name, _ = parse_model_string(model)
    if kind == "local":
        return _local_identity()
    return {"provider": kind, "model": name}


def default_judge_identity() -> dict[str, Any]:
    """Which judge `llm=None` means, without building it (building the embedded judge would
    assemble and load a 1 GB model): ASSAY_LLM's provider and model, else the embedded judge."""
    configured = os.environ.get("ASSAY_LLM")
    if configured:
        return model_string_identity(configured)
    return _local_identity()


def _local_identity() -> dict[str, Any]:
    chosen = os.environ.get("ASSAY_LOCAL_MODEL")
    if chosen and Path(chosen).is_file():
        return {
            "provider": "local",
            "model": Path(chosen).name,
            "bytes": Path(chosen).stat().st_size,
        }
    return embedded_judge_identity()


def _same_judge(card_judge: dict[str, Any], identity: dict[str, Any]) -> bool:
    keys = ("provider", "model", "bytes") if card_judge.get("provider") == "local" else ("model",)
    return all(card_judge.get(key) == identity.get(key) for key in keys)


# -- building cards from benchmark records ----------------------------------------------------
def _records(results_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(results_dir.glob("*.json")):
        try:
            record = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and {"suite", "metric", "figures", "judge"} <= set(record):
            found.append((path.name, record))
    return found


def _measures(
    record: dict[str, Any], metric: Any, params: dict[str, Any], prompts: dict[str, str]
) -> bool:
    """Did this run measure exactly `metric`'s current default configuration, with assay?"""
    described = record["metric"]
    return (
        (record.get("engine") or {}).get("name", "assay") == "assay"
        and described.get("name") == metric.name
        and str(described.get("version")) == str(type(metric).version)
        and json.loads(json.dumps(described.get("params") or {}, sort_keys=True)) == params
        and not described.get("alignment")
        and not record.get("prompts_dir")
        and {p["id"]: p["hash"] for p in record.get("prompts") or []} == prompts
        and record.get("threshold") in (None, 0.5)
    )


def build_cards(
    results_dir: str | Path, metrics: tuple[str, ...] = CORE_METRICS
) -> list[JudgeCard]:
    """One card per (metric, judge) found in the records, plus an all-unmeasured card for each
    of `metrics` with the embedded judge when no record measured it. For each suite and split
    the latest largest run counts (a later run of the same configuration replaces an older one)."""
    from assay.metrics.registry import create_metric

    folder = Path(results_dir)
    if not folder.is_dir():
        raise DataError("the benchmark results directory does not exist", file=str(folder))
    records = _records(folder)
    cards = []
    for metric_id in metrics:
        metric = create_metric(metric_id)
        params, prompts = configuration(metric)
        by_judge: dict[str, dict[tuple[str, str], tuple[str, dict[str, Any]]]] = {}
        for name, record in records:
            if not _measures(record, metric, params, prompts):
                continue
            runs = by_judge.setdefault(json.dumps(record["judge"], sort_keys=True), {})
            key = (record["suite"], record["split"])
            rank = (int(record.get("n_scored") or 0), str(record.get("date") or ""))
            earlier = runs.get(key)
            if earlier is None or rank > (
                int(earlier[1].get("n_scored") or 0),
                str(earlier[1].get("date") or ""),
            ):
                runs[key] = (name, record)
        if not by_judge:
            by_judge[json.dumps(embedded_judge_identity(), sort_keys=True)] = {}
        for judge_key, runs in sorted(by_judge.items()):
            agreement = [
                Measurement(
                    suite=record["suite"],
                    split=record["split"],
                    figure=figure["name"],
                    label=figure.get("label") or figure["name"],
                    value=figure.get("value"),
                    low=figure.get("low"),
                    high=figure.get("high"),
                    n=int(figure.get("n") or record.get("n_scored") or 0),
                    method=figure.get("method") or "",
                    date=str(record.get("date") or "")[:10],
                    source=name,
                )
                for (_, _), (name, record) in sorted(runs.items())
                for figure in record["figures"]
                if figure.get("headline")
            ]
            measured = {"agreement": bool(agreement), "stability": False, "languages": False}
            cards.append(
                JudgeCard(
                    metric=metric_id,
                    judge=json.loads(judge_key),
                    params=params,
                    prompts=prompts,
                    agreement=agreement,
                    unmeasured=[text for kind, text in EVIDENCE.items() if not measured[kind]],
                )
            )
    return cards


def write_cards(cards: list[JudgeCard], path: str | Path = CARDS_FILE) -> Path:
    target = Path(path)
    target.write_text(
        json.dumps([card.to_dict() for card in cards], indent=1, sort_keys=True) + "\n", "utf-8"
    )
    return target


def load_cards(path: str | Path = CARDS_FILE) -> list[JudgeCard]:
    source = Path(path)
    if not source.is_file():
        return []
    stat = source.stat()
    return list(_read_cards(str(source), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4)
def _read_cards(path: str, _mtime_ns: int, _size: int) -> tuple[JudgeCard, ...]:
    # Read once per process (a summary asks for a card per judged metric); a rebuilt file is
    # read again, as its modification time and size are part of the key.
    return tuple(JudgeCard.from_dict(item) for item in json.loads(Path(path).read_text("utf-8")))


def judge_card(
    metric: Any, llm: Any = None, *, cards: list[JudgeCard] | None = None
) -> JudgeCard | None:
    """The card of `metric` (an instance or an id) judged by `llm` (None: the default judge), or
    None when nothing was measured for this exact configuration and judge."""
    if isinstance(metric, str):
        from assay.metrics.registry import create_metric

        metric = create_metric(metric)
    judge = llm if llm is not None else getattr(metric, "llm", None)
    if isinstance(judge, str):
        identity = model_string_identity(judge)
    elif judge is not None and callable(getattr(judge, "identity", None)):
        identity = judge.identity()
    else:
        identity = default_judge_identity()
    params, prompts = configuration(metric)
    return _matching(metric.name, params, prompts, identity, cards)


def card_for_spec(
    spec: dict[str, Any], *, cards: list[JudgeCard] | None = None
) -> JudgeCard | None:
    """The card of a metric as a run recorded it (`Metric.spec()` in run.json: its name,
    parameters, prompts and judge), or None: for a metric without a judge, or a configuration or
    judge nothing was measured for. What the report shows beside a run's scores."""
    identity = spec.get("llm")
    if not isinstance(identity, dict) or not isinstance(spec.get("name"), str):
        return None
    params = json.loads(json.dumps(spec.get("params") or {}, sort_keys=True, default=str))
    prompts = {p["id"]: p["hash"] for p in spec.get("prompts") or [] if isinstance(p, dict)}
    return _matching(spec["name"], params, prompts, identity, cards)


def _matching(
    name: str,
    params: dict[str, Any],
    prompts: dict[str, str],
    identity: dict[str, Any],
    cards: list[JudgeCard] | None,
) -> JudgeCard | None:
    for card in cards if cards is not None else load_cards():
        if (
            card.metric == name
            and card.params == params
            and card.prompts == prompts
            and _same_judge(card.judge, identity)
        ):
            return card
    return None


__all__ = [
    "CARDS_FILE",
    "CORE_METRICS",
    "JudgeCard",
    "Measurement",
    "build_cards",
    "card_for_spec",
    "configuration",
    "default_judge_identity",
    "embedded_judge_identity",
    "judge_card",
    "load_cards",
    "model_string_identity",
    "write_cards",
]
