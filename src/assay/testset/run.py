"""The sample loop: quotas, waves of candidates, the gate, hand-overs, checkpoints.

1. The size is split over the synthesizers by largest remainder. A synthesizer that finds no
   clusters in the graph hands its share to the others (split by their weights), and the report
   says so.
2. Each synthesizer's scenario stream is tried in waves: as many candidates as it still needs,
   generated and gated concurrently, then decided in stream order, so the result never depends
   on which call returned first. Near-duplicates are checked against every question kept before.
3. A refused candidate is kept in the report with its reason and replaced by the next scenario;
   a candidate whose model call failed (after the model layer's retries) is recorded as failed
   and replaced too, and so is a draft cut off at its token budget ("truncated": no second try
   with a bigger budget). A synthesizer whose stream runs dry hands its unmet share to those
   that still have candidates, and so does one that has spent its share of the candidate
   budget (the budget split like the size): a writer that cannot make one kind of sample (a
   1.5B writer answering "multi-hop" drafts from one context, say) would otherwise spend the
   whole budget on it and leave the set short. The report names every hand-over and why.
   Everything stops at the candidate budget.
4. Each candidate's outcome (its draft and gate scores, or its truncation) is appended to the
   checkpoint as soon as that candidate finishes, not when its wave is decided, so a run killed
   mid-wave keeps what it paid for. On a rerun a recorded candidate is not asked again: its
   outcome is read back and decided in stream order like a fresh one, which gives the same set.
   Failed calls are not recorded, so they are tried again.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from typing import Any

import anyio

from assay.errors import OutputTruncated, first_leaf
from assay.schema.samples import SingleTurnSample
from assay.testset.checkpoint import Checkpoint
from assay.testset.gate import GateResult, QualityGate
from assay.testset.graph import KnowledgeGraph
from assay.testset.persona import Persona
from assay.testset.synthesizers import split_sizes
from assay.testset.synthesizers.base import BaseScenario, BaseSynthesizer
from assay.testset.testset import (
    GenerationReport,
    Provenance,
    Reassignment,
    RejectedCandidate,
    TestsetSample,
)


@dataclass
class _Lane:
    synthesizer: BaseSynthesizer
    weight: float
    quota: int
    stream: list[BaseScenario] = field(default_factory=list)
    cursor: int = 0  # scenarios tried so far
    kept: list[TestsetSample] = field(default_factory=list)
    allowance: int = 0  # candidates it may try: its share of the budget, plus what it received

    @property
    def need(self) -> int:
        return self.quota - len(self.kept)

    @property
    def left(self) -> int:
        """Scenarios it may still try: what is left of its stream, within its allowance."""
        return max(0, min(len(self.stream), self.allowance) - self.cursor)

    @property
    def dry(self) -> bool:
        """Every scenario of its stream has been tried (allowance or not)."""
        return self.cursor >= len(self.stream)


@dataclass
class _Outcome:
    scenario: BaseScenario
    sample: Any = None
    evidence: list[str] = field(default_factory=list)
    evidence_contexts: list[int] | None = None  # the context each quote was cited from
    gate: GateResult | None = None
    failure: str | None = None
    truncated: str | None = None  # why the draft was cut off
    replayed: dict[str, Any] | None = None  # a decision of an older checkpoint
    resumed: bool = False  # read back from the checkpoint, no call made
    judged: bool = False  # the gate's judge checks ran (the draft passed the cheap ones)

    def record(self) -> dict[str, Any] | None:
        """The checkpoint line of a finished candidate (None for a failed call: asked again)."""
        key = self.scenario.key
        if self.truncated is not None:
            return {"candidate": key, "status": "truncated", "reason": self.truncated}
        if self.failure is not None or self.gate is None:
            return None
        return {
            "candidate": key,
            "status": "answered",
            "sample": self.sample.model_dump(mode="json"),
            "evidence": self.evidence,
            "evidence_contexts": self.evidence_contexts,
            "gate": {
                "passed": self.gate.passed,
                "reason": self.gate.reason,
                "scores": self.gate.scores,
                "judged": self.judged,
            },
        }


def _read_back(scenario: BaseScenario, record: dict[str, Any]) -> _Outcome:
    """A candidate's outcome from its checkpoint line, as if it had just finished."""
    outcome = _Outcome(scenario, resumed=True)
    status = record.get("status")
    if status == "answered":
        outcome.sample = SingleTurnSample.model_validate(record["sample"])
        outcome.evidence = list(record.get("evidence") or [])
        outcome.evidence_contexts = record.get("evidence_contexts")
        gate = record["gate"]
        outcome.gate = GateResult(gate["passed"], gate.get("reason", ""), gate.get("scores", {}))
        scores = outcome.gate.scores
        # lines written before the flag: the judge checks leave their scores behind
        outcome.judged = bool(
            gate.get("judged", "reference_supported" in scores or scores.get("judged") is False)
        )
    elif status == "truncated":
        outcome.truncated = record.get("reason", "")
    else:  # "kept" / "rejected": a decision written by an earlier version, replayed as it is
        outcome.replayed = record
    return outcome


def _share_out(lanes: list[_Lane], deficit: int, per_sample: float) -> dict[str, int]:
    """Hand `deficit` samples to `lanes` by weight, each with `per_sample` candidates of the
    budget for every sample it receives."""
    counts = split_sizes([lane.weight or 1e-9 for lane in lanes], deficit)
    given = {}
    for lane, count in zip(lanes, counts, strict=True):
        if count:
            lane.quota += count
            lane.allowance += math.ceil(count * per_sample)
            given[lane.synthesizer.name] = count
    return given


def _hand_over(lanes: list[_Lane], per_sample: float, report: GenerationReport) -> None:
    """A lane that still needs samples but may try no more scenarios (its stream ran dry, or it
    spent its allowance) hands its need to the lanes that may. When none may, a lane that only
    spent its allowance keeps the rest of the budget (the first such lane in distribution
    order), and a dry one hands its need to any lane with scenarios left (each receiver gets
    allowance with what it receives), rather than leave the set short."""
    for lane in lanes:
        if lane.need <= 0 or lane.left > 0:
            continue
        receivers = [other for other in lanes if other.left > 0 and other is not lane]
        if not receivers and not lane.dry:
            lane.allowance = len(lane.stream)
            continue
        if not receivers:
            receivers = [o for o in lanes if o is not lane and not o.dry]
        if not receivers:
            continue
        deficit = lane.need
        lane.quota -= deficit
        refused = lane.cursor - len(lane.kept)
        reason = (
            f"ran out of candidates after {lane.cursor} tried"
            if lane.dry
            else f"spent its share of the candidate budget ({lane.cursor} tried, "
            f"{refused} refused or failed)"
        )
        report.reassigned.append(
            Reassignment(
                synthesizer=lane.synthesizer.name,
                samples=deficit,
                to=_share_out(receivers, deficit, per_sample),
                reason=reason,
            )
        )


async def generate_samples(
    kg: KnowledgeGraph,
    distribution: list[tuple[BaseSynthesizer, float]],
    personas: list[Persona],
    size: int,
    gate: QualityGate,
    report: GenerationReport,
    *,
    seed: int,
    budget: int,
    max_workers: int,
    checkpoint: Checkpoint | None,
    on_progress: Any = None,
    raise_exceptions: bool = False,
) -> list[TestsetSample]:
    lanes: list[_Lane] = []
    requested = split_sizes([w for _, w in distribution], size)
    per_sample = budget / max(size, 1)  # candidates of the budget per sample asked for
    report.requested_split = {s.name: n for (s, _), n in zip(distribution, requested, strict=True)}
    # each lane's share of the candidate budget, split like the size; a lane with a quota may
    # try at least once, even when the budget is smaller than the number of lanes
    allowances = [
        max(share, 1 if quota else 0)
        for share, quota in zip(
            split_sizes([quota or 1e-9 for quota in requested], budget), requested, strict=True
        )
    ]
    empty: list[tuple[str, int, str]] = []
    for (synthesizer, weight), quota, allowance in zip(
        distribution, requested, allowances, strict=True
    ):
        try:
            stream = synthesizer.scenario_stream(kg, personas, budget, seed)
        except Exception as exc:
            stream, why = [], f"could not read the graph: {type(exc).__name__}: {exc}"
        else:
            why = "found no clusters in the knowledge graph"
        lane = _Lane(synthesizer, weight, quota, list(stream), allowance=allowance)
        if not lane.stream:
            empty.append((synthesizer.name, quota, why))
            lane.quota = 0
        lanes.append(lane)
    live = [lane for lane in lanes if lane.stream]
    if not live:
        raise ValueError(
            "No compatible query synthesizers for the provided KnowledgeGraph: "
            + "; ".join(f"{name} {why}" for name, _, why in empty)
        )
    for name, quota, why in empty:
        if quota:
            given = _share_out(live, quota, per_sample)
            report.reassigned.append(
                Reassignment(synthesizer=name, samples=quota, to=given, reason=why)
            )
        else:
            report.notes.append(f"{name} {why} (it had no share of this size)")
    decisions = checkpoint.decisions() if checkpoint else {}
    kept_questions: list[str] = []
    tried = 0
    limiter = anyio.CapacityLimiter(max_workers)

    def record_finished(outcome: _Outcome) -> None:
        # Written before the next await: a run cancelled later keeps this candidate.
        record = outcome.record()
        if checkpoint is not None and record is not None:
            checkpoint.record(record)

    async def gate_draft(
        outcome: _Outcome, lane: _Lane, snapshot: list[str], judged_before: GateResult | None
    ) -> None:
        """The gate on a draft. The cheap checks always run (they are free, and a rerun then
        applies the current gate to drafts already paid for); the judge checks reuse the answer
        of an earlier run when there is one, so reading a draft back makes no call."""
        scenario = outcome.scenario
        if judged_before is not None and (
            judged_before.scores.get("judged_with") != gate.judge_settings()
        ):
            judged_before = None  # judged against other thresholds: ask again (the cache answers)
        result = gate.cheap_checks(
            outcome.sample,
            outcome.evidence,
            snapshot,
            lane.synthesizer.multi_hop,
            scenario.language,
            sources=outcome.evidence_contexts,
        )
        if result.passed:
            judged = judged_before or await gate.judged_checks(
                outcome.sample, scenario.language, lane.synthesizer.multi_hop
            )
            outcome.judged = True
            # the fresh cheap scores win over those kept with an earlier judge answer
            result = GateResult(judged.passed, judged.reason, {**judged.scores, **result.scores})
        else:
            # refused before the judge: the record then holds no verdict to reuse later
            outcome.judged = False
        outcome.gate = result

    async def attempt(lane: _Lane, scenario: BaseScenario, snapshot: list[str]) -> _Outcome:
        if scenario.key in decisions:
            outcome = _read_back(scenario, decisions[scenario.key])
            if outcome.gate is None:
                return outcome
            before = outcome.gate
            async with limiter:
                try:
                    await gate_draft(outcome, lane, snapshot, before if outcome.judged else None)
                except Exception as exc:
                    if raise_exceptions:
                        raise
                    outcome.failure = f"{type(exc).__name__}: {exc}"
            if outcome.gate != before:
                record_finished(outcome)  # the current gate decided otherwise: keep its verdict
            return outcome
        outcome = _Outcome(scenario)
        async with limiter:
            try:
                try:
                    sample, evidence, sources = await lane.synthesizer.agenerate_candidate(scenario)
                except OutputTruncated as exc:
                    outcome.truncated = str(exc)
                    record_finished(outcome)
                    return outcome
                outcome.sample, outcome.evidence = sample, evidence
                outcome.evidence_contexts = sources
                await gate_draft(outcome, lane, snapshot, None)
            except Exception as exc:  # skipped and recorded; the next scenario replaces it
                if raise_exceptions:
                    raise
                outcome.failure = f"{type(exc).__name__}: {exc}"
        record_finished(outcome)
        return outcome

    while True:
        _hand_over(lanes, per_sample, report)
        wave: list[tuple[_Lane, BaseScenario]] = []
        for lane in lanes:
            take = min(max(lane.need, 0), lane.left, budget - tried - len(wave))
            wave += [(lane, s) for s in lane.stream[lane.cursor : lane.cursor + take]]
            lane.cursor += take
        if not wave:
            break
        tried += len(wave)
        snapshot = list(kept_questions)
        outcomes: list[_Outcome | None] = [None] * len(wave)

        async def run(
            index: int, lane: _Lane, scenario: BaseScenario, seen: list[str], into: list
        ) -> None:
            into[index] = await attempt(lane, scenario, seen)

        try:
            async with anyio.create_task_group() as group:
                for index, (lane, scenario) in enumerate(wave):
                    group.start_soon(run, index, lane, scenario, snapshot, outcomes)
        except Exception as exc:  # raise_exceptions: the first failure itself, not a group
            leaf = first_leaf(exc)
            if leaf is exc:
                raise
            raise leaf from exc
        for (lane, _), outcome in zip(wave, outcomes, strict=True):
            assert outcome is not None
            _decide(kg, lane, outcome, gate, kept_questions, report)
            if on_progress:
                on_progress("samples", sum(len(x.kept) for x in lanes), size)
    report.candidates_tried = tried
    report.candidate_budget = budget
    produced = [sample for lane in lanes for sample in lane.kept]
    report.produced = len(produced)
    report.produced_split = {lane.synthesizer.name: len(lane.kept) for lane in lanes}
    report.shortfall = size - len(produced)
    if report.shortfall:
        if tried >= budget:
            report.shortfall_reasons.append(f"the candidate budget of {budget} was spent")
        for lane in lanes:
            if lane.need > 0 and lane.dry:
                report.shortfall_reasons.append(
                    f"{lane.synthesizer.name} ran out of scenarios ({len(lane.stream)} tried)"
                )
        counts = collections.Counter(r.reason.split(":", 1)[0] for r in report.rejected)
        if counts:
            report.shortfall_reasons.append(
                "candidates refused or failed: "
                + ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items()))
            )
    return produced


def _decide(
    kg: KnowledgeGraph,
    lane: _Lane,
    outcome: _Outcome,
    gate: QualityGate,
    kept_questions: list[str],
    report: GenerationReport,
) -> None:
    scenario, name = outcome.scenario, lane.synthesizer.name
    if outcome.replayed is not None:
        record = outcome.replayed
        if record["status"] == "kept":
            sample = TestsetSample.model_validate(record["sample"])
            lane.kept.append(sample)
            question = sample.eval_sample.user_input  # a generated sample is single-turn: a str
            kept_questions.append(question if isinstance(question, str) else "")
            report.resumed_samples += 1
        else:
            report.rejected.append(RejectedCandidate.model_validate(record["rejected"]))
        return
    failed = (
        f"truncated: {outcome.truncated}"
        if outcome.truncated is not None
        else f"failed: {outcome.failure}"
        if outcome.failure is not None
        else None
    )
    if failed is not None:
        report.rejected.append(
            RejectedCandidate(
                candidate=scenario.key, synthesizer=name, reason=failed, kind="failed"
            )
        )
        return
    sample, result = outcome.sample, outcome.gate
    assert result is not None
    if result.passed:  # a question kept earlier in this wave may make this one a duplicate
        similarity = gate.nearest(sample.user_input or "", kept_questions)
        if similarity >= gate.duplicate_threshold:
            result = GateResult(
                False, f"duplicate: {similarity:.0f}% like a question already kept", result.scores
            )
    if not result.passed:
        rejected = RejectedCandidate(
            candidate=scenario.key,
            synthesizer=name,
            reason=result.reason,
            user_input=sample.user_input,
            reference=sample.reference,
            gate=result.scores,
        )
        report.rejected.append(rejected)
        return
    nodes = scenario.nodes
    kept = TestsetSample(
        eval_sample=sample,
        synthesizer_name=name,
        provenance=Provenance(
            document_ids=list(dict.fromkeys(str(kg.document_of(n).id) for n in nodes)),
            chunk_ids=[str(n.id) for n in nodes],
            evidence=result.scores.get("evidence_verbatim") or outcome.evidence,
            synthesizer=name,
            persona=scenario.persona.name,
            style=scenario.style.value,
            length=scenario.length.value,
            language=scenario.language,
            terms=[
                t
                for t in [getattr(scenario, "term", ""), *getattr(scenario, "combinations", [])]
                if t
            ],
            gate=result.scores,
            candidate=scenario.key,
        ),
    )
    lane.kept.append(kept)
    kept_questions.append(sample.user_input or "")
    if outcome.resumed:
        report.resumed_samples += 1


__all__ = ["generate_samples"]
