"""The aligned state and the mechanics scoring needs: examples chosen per row, the threshold,
persistence and the prompt checks (see the package docstring)."""

from __future__ import annotations

import contextlib
import contextvars
import copy
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay._version import __version__
from assay.errors import UsageError
from assay.prompts.prompt import Example
from assay.schema.outcome import MetricResult

STATE_FORMAT = "assay.aligned/1"
TEMPLATE = "template"  # the prompt id of a DiscreteMetric/NumericMetric/RankingMetric template

_POSITIVE = {"1", "true", "yes", "pass", "passed", "accept", "accepted", "good", "faithful"}
_NEGATIVE = {"0", "false", "no", "fail", "failed", "reject", "rejected", "bad", "unfaithful"}


def as_binary(label: Any) -> int | None:
    """1/0 for a yes/no kind of label (bool, 0/1, "pass"/"fail", "yes"/"no", ...), else None."""
    if isinstance(label, bool):
        return int(label)
    if isinstance(label, (int, float)) and label in (0, 1):
        return int(label)
    if isinstance(label, str):
        word = label.strip().lower()
        if word in _POSITIVE:
            return 1
        if word in _NEGATIVE:
            return 0
    return None


@dataclass
class AlignedExample:
    """One labelled row turned into a worked example for one prompt."""

    id: str
    label: Any
    prompt_id: str
    input: dict[str, Any]
    output: Any
    group: str | None = None
    vector: list[float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "prompt_id": self.prompt_id,
            "input": self.input,
            "output": self.output,
            "group": self.group,
            "vector": self.vector,
        }


# Rows scored while the threshold is calibrated must not see their own label: the aligner puts
# the row's group here for the duration of that one score (a context variable, so concurrent
# scores each exclude their own).
_excluded_groups: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "assay_aligned_excluded_groups", default=frozenset()
)


@contextlib.contextmanager
def excluding(groups: Sequence[str]) -> Iterator[None]:
    """Within this block, examples from these groups are never shown to the judge."""
    token = _excluded_groups.set(_excluded_groups.get() | frozenset(groups))
    try:
        yield
    finally:
        _excluded_groups.reset(token)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def nearest_examples(
    pool: Sequence[AlignedExample],
    query: Sequence[float] | None,
    k: int,
    *,
    balance: bool = True,
    similarity_threshold: float | None = None,
    fallback: Literal["balanced", "recent"] = "balanced",
) -> list[AlignedExample]:
    """The `k` examples to show for a query vector, least similar first (so the closest sits
    next to the row being judged). With `balance`, labels take turns (the label whose best example
    is closest goes first), so no label is missing while another has examples to spare. Examples
    below `similarity_threshold` are left out; when none is left, `fallback` decides: "balanced"
    ignores the threshold, "recent" takes the last k of the pool (what Ragas does)."""
    if k <= 0 or not pool:
        return []
    if query is None:
        scored = [(0.0, index, example) for index, example in enumerate(pool)]
    else:
        scored = [
            (cosine(query, example.vector) if example.vector else 0.0, index, example)
            for index, example in enumerate(pool)
        ]
    ranked = sorted(scored, key=lambda item: (-item[0], item[1]))
    if similarity_threshold is not None:
        kept = [item for item in ranked if item[0] >= similarity_threshold]
        if not kept:
            if fallback == "recent":
                return list(pool[-k:])
            kept = ranked
        ranked = kept
    if not balance:
        chosen = ranked[:k]
    else:
        by_label: dict[str, list[tuple[float, int, AlignedExample]]] = {}
        for item in ranked:
            by_label.setdefault(json.dumps(item[2].label, sort_keys=True), []).append(item)
        queues = list(by_label.values())  # in order of each label's closest example
        chosen = []
        while len(chosen) < k and any(queues):
            for queue in queues:
                if queue and len(chosen) < k:
                    chosen.append(queue.pop(0))
    chosen.sort(key=lambda item: (item[0], -item[1]))
    return [example for _, _, example in chosen]


def query_text(fields: dict[str, Any]) -> str:
    """The text embedded for a row, for comparing rows: its fields in a fixed order."""
    parts = []
    for name in sorted(fields):
        value = fields[name]
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = "\n".join(str(item) for item in value)
        parts.append(f"{name}: {value}")
    return "\n".join(parts)


async def embed(embeddings: Any, texts: list[str]) -> list[list[float]]:
    """Vectors from an assay `Embeddings` or any object with LangChain/Ragas embedding methods."""
    if not texts:
        return []
    for method in ("aembed_texts", "aembed_documents"):
        if callable(getattr(embeddings, method, None)):
            return [list(map(float, v)) for v in await getattr(embeddings, method)(texts)]
    if callable(getattr(embeddings, "embed_documents", None)):
        return [list(map(float, v)) for v in embeddings.embed_documents(texts)]
    raise UsageError(
        f"{type(embeddings).__name__} cannot embed texts (no aembed_texts/embed_documents)"
    )


def decision_score(result: MetricResult) -> Any:
    """What a threshold reads: the value; but a yes/no judge (value 0 or 1) that also reports how
    sure it was (`details["probabilities"]` per vote, or `details["probability"]`) is read by the
    mean P(yes), so a threshold can be calibrated on it (a cut between 0 and 1 cannot move)."""
    value = result.value
    if isinstance(value, bool) or value not in (0, 1):
        return value
    details = result.details or {}
    found = details.get("probabilities")
    if found is None and isinstance(details.get("probability"), (int, float)):
        found = [details["probability"]]
    if isinstance(found, list) and found and all(isinstance(p, (int, float)) for p in found):
        return sum(found) / len(found)
    return value


def template_hash(template: str) -> str:
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


def prompt_fingerprints(metric: Any) -> dict[str, dict[str, Any]]:
    """Prompt id -> version and content hash of the prompts the metric sends now."""
    if hasattr(metric, "prompt_ids") and hasattr(metric, "judge_prompt"):
        return {
            prompt_id: {
                "version": metric.judge_prompt(prompt_id).version,
                "hash": metric.judge_prompt(prompt_id).hash,
            }
            for prompt_id in metric.prompt_ids
        }
    return {TEMPLATE: {"version": metric.version, "hash": template_hash(metric.prompt)}}


@dataclass
class AlignedState:
    """Everything `align` fitted, attached to a metric as `metric.alignment`."""

    metric_class: str
    metric_name: str
    prompts: dict[str, dict[str, Any]]
    examples: list[AlignedExample] = field(default_factory=list)
    k: int = 3
    balance: bool = True
    selection: Literal["similar", "fixed"] = "similar"
    similarity_threshold: float | None = None
    fallback: Literal["balanced", "recent"] = "balanced"
    fixed_ids: list[str] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)
    threshold: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    embeddings: Any = None  # used at scoring time for selection="similar"; never saved

    # -- scoring ---------------------------------------------------------------------------
    async def choose(self, fields: dict[str, Any]) -> list[AlignedExample]:
        """The examples to show when scoring a row with these fields."""
        excluded = _excluded_groups.get()
        pool = [e for e in self.examples if e.group is None or e.group not in excluded]
        if self.k <= 0 or not pool:
            return []
        if self.selection == "fixed":
            wanted = set(self.fixed_ids)
            return [e for e in pool if e.id in wanted]
        if self.embeddings is None:
            raise UsageError(
                f"the aligned {self.metric_name!r} picks examples by similarity and needs an "
                "embedding model: give embedding_model= to align/load_alignment"
            )
        (vector,) = await embed(self.embeddings, [query_text(fields)])
        return nearest_examples(
            pool,
            vector,
            self.k,
            balance=self.balance,
            similarity_threshold=self.similarity_threshold,
            fallback=self.fallback,
        )

    async def prepare(self, metric: Any, fields: dict[str, Any]) -> Any:
        """A copy of `metric` whose prompts carry the chosen examples and instructions."""
        chosen = await self.choose(fields)
        scorer = copy.copy(metric)
        if hasattr(metric, "judge_prompt"):
            overrides = dict(getattr(metric, "_prompt_overrides", {}))
            for prompt_id in metric.prompt_ids:
                mine = [e for e in chosen if e.prompt_id == prompt_id]
                if not mine and prompt_id not in self.instructions:
                    continue
                base = metric.judge_prompt(prompt_id)
                overrides[prompt_id] = base.model_copy(
                    update={
                        "instruction": self.instructions.get(prompt_id, base.instruction),
                        "examples": (
                            *base.examples,
                            *(Example(input=e.input, output=e.output) for e in mine),
                        ),
                    }
                )
            object.__setattr__(scorer, "_prompt_overrides", overrides)
        else:  # a template metric: the template is its instruction
            scorer.prompt = self.instructions.get(TEMPLATE, metric.prompt)
            scorer.examples = [
                *metric.examples,
                *({"inputs": e.input, "output": e.output} for e in chosen),
            ]
        object.__setattr__(scorer, "_aligned", None)  # the copy scores plainly
        return scorer

    def decide(self, value: Any) -> bool | None:
        """Which side of the calibrated threshold a value falls on (None without a threshold)."""
        if self.threshold is None or isinstance(value, bool):
            return None if self.threshold is None else bool(value)
        try:
            return float(value) >= self.threshold
        except (TypeError, ValueError):
            return None

    def annotate(self, result: MetricResult) -> MetricResult:
        score = decision_score(result)
        note = {"threshold": self.threshold, "passed": self.decide(score)}
        if score is not result.value:
            note["score"] = score
        result.details = {**(result.details or {}), "alignment": note}
        return result

    # -- persistence -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "assay_version": __version__,
            "metric_class": self.metric_class,
            "metric_name": self.metric_name,
            "prompts": self.prompts,
            "k": self.k,
            "balance": self.balance,
            "selection": self.selection,
            "similarity_threshold": self.similarity_threshold,
            "fallback": self.fallback,
            "fixed_ids": self.fixed_ids,
            "instructions": self.instructions,
            "threshold": self.threshold,
            "provenance": self.provenance,
            "examples": [example.to_json() for example in self.examples],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "the alignment") -> AlignedState:
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise UsageError(
                f"{source} is not an aligned-metric state (expected format {STATE_FORMAT!r}, "
                f"got {data.get('format') if isinstance(data, dict) else type(data).__name__!r})"
            )
        try:
            examples = [AlignedExample(**item) for item in data.get("examples", [])]
            return cls(
                metric_class=data["metric_class"],
                metric_name=data["metric_name"],
                prompts=data["prompts"],
                examples=examples,
                k=int(data.get("k", 3)),
                balance=bool(data.get("balance", True)),
                selection=data.get("selection", "similar"),
                similarity_threshold=data.get("similarity_threshold"),
                fallback=data.get("fallback", "balanced"),
                fixed_ids=list(data.get("fixed_ids", [])),
                instructions=dict(data.get("instructions", {})),
                threshold=data.get("threshold"),
                provenance=dict(data.get("provenance", {})),
            )
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{source}: malformed aligned state ({exc})") from exc

    def fingerprint(self) -> dict[str, Any]:
        """What results record about the alignment: a content hash of everything scoring uses."""
        used = {
            key: value
            for key, value in self.to_json().items()
            if key not in ("provenance", "assay_version")
        }
        digest = hashlib.sha256(json.dumps(used, sort_keys=True, default=str).encode("utf-8"))
        return {
            "hash": digest.hexdigest()[:12],
            "examples": len(self.examples),
            "k": self.k,
            "selection": self.selection,
            "threshold": self.threshold,
            "instructions": sorted(self.instructions),
        }

    def check_fits(self, metric: Any, source: str = "the alignment") -> None:
        """Refuse a state fitted on another metric class or on other prompt wording."""
        if self.metric_class != type(metric).__name__:
            raise UsageError(
                f"{source} was fitted for a {self.metric_class}, not a {type(metric).__name__}"
            )
        current = prompt_fingerprints(metric)
        for prompt_id, fitted in self.prompts.items():
            now = current.get(prompt_id)
            if now is None:
                raise UsageError(
                    f"{source} was fitted on prompt {prompt_id!r}, which this "
                    f"{type(metric).__name__} no longer sends (it sends {sorted(current)})"
                )
            if now["hash"] != fitted["hash"] or now["version"] != fitted["version"]:
                raise UsageError(
                    f"{source} was fitted on prompt {prompt_id!r} version {fitted['version']} "
                    f"(hash {fitted['hash']}); this metric's prompt is version {now['version']} "
                    f"(hash {now['hash']}). Align again on the current prompt."
                )


__all__ = [
    "STATE_FORMAT",
    "TEMPLATE",
    "AlignedExample",
    "AlignedState",
    "as_binary",
    "cosine",
    "decision_score",
    "embed",
    "excluding",
    "nearest_examples",
    "prompt_fingerprints",
    "query_text",
    "template_hash",
]
