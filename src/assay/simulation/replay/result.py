"""What a replay returns: the recorded and the replayed trajectory side by side, their
differences, their scores; and a set of replays as a regression dataset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.schema.dataset import EvaluationDataset
from assay.schema.messages import ToolCall
from assay.schema.outcome import Error, Ok, Outcome
from assay.schema.samples import MultiTurnSample
from assay.simulation.replay.diff import ToolCallDiff, final_answer
from assay.simulation.replay.tools import ToolUse


@dataclass
class ReplayResult:
    """original: the recorded trajectory; replayed: the agent's new one (up to the failure, if
    any). tool_call_diff and final_answer_changed compare them. scores: per side ("original",
    "replayed") the outcome of each metric (the replayed side is not scored when the replay
    failed). uses: every tool call of the replay and where its answer came from ("recording",
    "live", "miss"). error: the replay's typed failure (`ReplayMiss`, `AgentError`,
    `AgentTimeout`, `AgentLooped`, `UnreadableAgentReply`), else None."""

    original: MultiTurnSample
    replayed: MultiTurnSample | None
    tool_call_diff: ToolCallDiff
    final_answer_changed: bool
    uses: list[ToolUse] = field(default_factory=list)
    error: Error | None = None
    scores: dict[str, dict[str, Outcome]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def misses(self) -> list[ToolCall]:
        """The calls the recording held no answer for (the agent may have caught the error)."""
        return [use.call for use in self.uses if use.source == "miss"]

    @property
    def live_calls(self) -> list[ToolCall]:
        return [use.call for use in self.uses if use.source == "live"]

    @property
    def original_answer(self) -> str | None:
        return final_answer(self.original)

    @property
    def replayed_answer(self) -> str | None:
        return final_answer(self.replayed) if self.replayed is not None else None

    def score_change(self) -> dict[str, float | None]:
        """Per metric, replayed minus original when both are numbers, else None."""
        changes: dict[str, float | None] = {}
        before, after = self.scores.get("original", {}), self.scores.get("replayed", {})
        for metric, outcome in before.items():
            old, new = _number(outcome), _number(after.get(metric))
            changes[metric] = new - old if old is not None and new is not None else None
        return changes

    def regression_sample(self) -> MultiTurnSample | None:
        """The replayed trajectory with the recording as its reference (the reference, else the
        recorded final answer; the recorded tool calls), for `evaluate` with
        `ToolCallAccuracy` or `AgentGoalAccuracyWithReference`. None when the replay failed."""
        if self.replayed is None or not self.ok:
            return None
        metadata: dict[str, Any] = {
            **(self.original.metadata or {}),
            "final_answer_changed": self.final_answer_changed,
            "tool_calls_same": self.tool_call_diff.same,
        }
        return MultiTurnSample(
            user_input=list(self.replayed.user_input),
            reference=self.original.reference or self.original_answer,
            reference_tool_calls=self.original.tool_calls() or None,
            metadata=metadata,
        )

    def __str__(self) -> str:
        error = self.error
        head = f"replay failed: {error.error_type}: {error.message}" if error else "replay"
        answer = "final answer changed" if self.final_answer_changed else "same final answer"
        lines = [f"{head} ({answer})", str(self.tool_call_diff)]
        for side in ("original", "replayed"):
            for metric, outcome in self.scores.get(side, {}).items():
                lines.append(f"{side} {metric}: {_shown(outcome)}")
        return "\n".join(lines)


def _number(outcome: Outcome | None) -> float | None:
    if isinstance(outcome, Ok) and isinstance(outcome.value, (int, float)):
        return float(outcome.value)
    return None


def _shown(outcome: Outcome) -> str:
    if isinstance(outcome, Ok):
        return f"{outcome.value}"
    if isinstance(outcome, Error):
        return f"error {outcome.error_type}: {outcome.message}"
    return f"skipped: {getattr(outcome, 'reason', '')}"


@dataclass
class ReplaySet:
    """Replays of many recordings, in the order given."""

    results: list[ReplayResult]

    @property
    def dataset(self) -> EvaluationDataset:
        """The regression dataset: each successful replay's trajectory with its recording as the
        reference (`ReplayResult.regression_sample`)."""
        samples = [r.regression_sample() for r in self.results]
        return EvaluationDataset([s for s in samples if s is not None], name="replays")

    @property
    def originals(self) -> EvaluationDataset:
        """The recordings, as samples `replay_many` takes again (save them with `to_jsonl`)."""
        return EvaluationDataset([r.original for r in self.results], name="recordings")

    def errors(self) -> list[ReplayResult]:
        return [r for r in self.results if not r.ok]

    def counts(self) -> dict[str, int]:
        """How many replays kept the same calls and answer, changed, or failed."""
        found = {"same": 0, "changed": 0, "error": 0}
        for result in self.results:
            if not result.ok:
                found["error"] += 1
            elif result.tool_call_diff.same and not result.final_answer_changed:
                found["same"] += 1
            else:
                found["changed"] += 1
        return found

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Any:
        return iter(self.results)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        return f"ReplaySet({len(self.results)} replays: {counts})"


__all__ = ["ReplayResult", "ReplaySet"]
