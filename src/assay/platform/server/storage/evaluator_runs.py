"""What an online evaluator's job reads and writes: its pending traces, and their judged outcomes.

Separate from `evaluators.py` (the rules and the routing of traces) because only the worker's
`online_eval` job uses it. `store` is where "never scored twice" and the daily budget hold: in
one transaction it locks the evaluator's row, moves each trace's row from `pending` to `scored`
(or `error`) only if it is still pending, and appends the scores only for the rows it moved; a
row past the day's budget becomes `skipped_budget` with the reason instead. A row whose judge
was down for the run (`jobs/calls.py`'s gate) becomes `judge_down` with the judge's failure as
its reason and no score; the evaluator's next run makes it `pending` again (`retry_down`) and
judges it, so it is scored once, when the judge answers.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, cast

from sqlalchemy import update

from assay.platform.server.storage import models
from assay.platform.server.storage.evaluator_rules import back_to_pending
from assay.platform.server.storage.evaluators import EvaluatorRepo, utc_midnight
from assay.platform.server.storage.repos import ProjectScoped
from assay.platform.server.storage.traces import TraceRepo

Run, T = models.OnlineEvaluation, models.LoggedTrace
ERROR_MAX = 2_000


@dataclass(frozen=True)
class Judged:
    """One pending trace judged: its row, its trace and one score row per criterion."""

    run_id: int
    trace_id: str
    scores: list[dict[str, Any]]
    down: str | None = None  # the judge did not answer (down for the run): why; nothing stored

    @property
    def failed(self) -> dict[str, Any] | None:
        """The first error outcome among the scores, if any."""
        for score in self.scores:
            if score["outcome"].get("status") == "error":
                return cast(dict[str, Any], score["outcome"])
        return None


def budget_reason(budget: int, day: datetime) -> str:
    return f"the daily budget of {budget} traces was spent on {day.date().isoformat()} (UTC)"


def down_reason(cause: str) -> str:
    """A `judge_down` row's reason: the judge's failure, and that the row is judged again."""
    return f"the judge did not answer ({cause}); the evaluator's next run judges it"[:ERROR_MAX]


class EvaluationRuns(ProjectScoped):
    def pending(
        self, evaluator_id: int, version: int, after: int, limit: int
    ) -> builtins.list[tuple[int, models.LoggedTrace]]:
        """The next `limit` pending rows of the version (row id over `after`), with their traces."""
        query = (
            self._columns(Run, Run.id, T)
            .join(T, (T.project_id == Run.project_id) & (T.id == Run.trace_id))
            .where(
                Run.evaluator_id == evaluator_id,
                Run.evaluator_version == version,
                Run.status == "pending",
                Run.id > after,
            )
            .order_by(Run.id)
            .limit(limit)
        )
        return [(int(ident), trace) for ident, trace in self.session.execute(query).all()]

    def budget_left(self, evaluator: models.OnlineEvaluator) -> int | None:
        """How many more traces may be judged today (None: no budget)."""
        if evaluator.daily_budget is None:
            return None
        used = EvaluatorRepo(self.session, self.project_id).judged_since(
            evaluator.id, utc_midnight()
        )
        return max(0, evaluator.daily_budget - used)

    def skip(self, evaluator: models.OnlineEvaluator, run_ids: builtins.list[int]) -> int:
        """Mark still-pending rows `skipped_budget`, with the reason."""
        if not run_ids or evaluator.daily_budget is None:
            return 0
        done = self.session.execute(
            self._pending_rows(run_ids).values(
                status="skipped_budget",
                reason=budget_reason(evaluator.daily_budget, utc_midnight()),
                judged_at=datetime.now(timezone.utc),
            )
        )
        return int(cast(Any, done).rowcount or 0)

    def retry_down(self, evaluator: models.OnlineEvaluator) -> int:
        """The version's rows (traces and sessions) left `judge_down` by an earlier run, pending
        again, so that this run judges them; returns how many."""
        count = 0
        for table in (Run, models.SessionEvaluation):
            statement = back_to_pending(table, self.project_id, evaluator, "judge_down")
            count += int(cast(Any, self.session.execute(statement)).rowcount or 0)
        return count

    def _pending_rows(self, run_ids: builtins.list[int]) -> Any:
        return update(Run).where(
            Run.project_id == self.project_id, Run.id.in_(run_ids), Run.status == "pending"
        )

    def store(self, evaluator_id: int, judged: builtins.list[Judged]) -> dict[str, int]:
        """Store judged traces once each, within the day's budget; returns how many rows went to
        each state. Rows no longer pending (stored by another run, superseded) store nothing."""
        evaluators = EvaluatorRepo(self.session, self.project_id)
        evaluator = evaluators.find_by_id(evaluator_id, lock=True)  # one store at a time
        stored = {"scored": 0, "error": 0, "skipped_budget": 0, "judge_down": 0}
        if evaluator is None:
            return stored
        left = self.budget_left(evaluator)
        now, scores = datetime.now(timezone.utc), []
        for item in judged:
            if item.down is not None:  # not judged: no score, no budget spent, judged again later
                moved = self.session.execute(
                    self._pending_rows([item.run_id]).values(
                        status="judge_down", reason=down_reason(item.down), judged_at=now
                    )
                )
                if cast(Any, moved).rowcount:
                    stored["judge_down"] += 1
                    evaluator.last_error, evaluator.last_error_at = item.down[:ERROR_MAX], now
                continue
            if left is not None and left <= 0:
                stored["skipped_budget"] += self.skip(evaluator, [item.run_id])
                continue
            failed = item.failed
            status = "error" if failed else "scored"
            moved = self.session.execute(
                self._pending_rows([item.run_id]).values(status=status, judged_at=now)
            )
            if not cast(Any, moved).rowcount:
                continue
            stored[status] += 1
            scores += item.scores
            if left is not None:
                left -= 1
            if failed:
                message = f"{failed.get('error_type')}: {failed.get('error_message')}"
                evaluator.last_error, evaluator.last_error_at = message[:ERROR_MAX], now
        TraceRepo(self.session, self.project_id).add_scores(scores)
        self.session.flush()
        return stored


__all__ = ["EvaluationRuns", "Judged", "budget_reason", "down_reason"]
