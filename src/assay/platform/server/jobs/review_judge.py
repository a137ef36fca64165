"""The `review_judge` job: score the items of one review queue with its criteria and judge model.

Claimed and kept by the job worker like an experiment job. It walks the queue's items in the
order they entered and, per chunk, judges each (trace, criterion) that has no score from this
queue yet, or whose latest score from it says the judge was down, with the library
(`assay.aevaluate` and the library's `Criteria`; function criteria run here with RE2), and
appends each typed outcome to `trace_scores` (source `judge:<model>`, or
`function:<criterion>`). A job that stops or dies resumes where the stored scores end; items that
enter meanwhile get the next queued job. A criterion deleted from the project after the queue was
made is an error outcome naming it, never a silent gap.

The judge goes through the run's gate (`calls.GatedModels`): once it is down for the run, the
remaining items are not asked and each gets an `EndpointDown` error score naming the model and
why, and the job ends with `ModelsDown`. Those scores do not stand: the queue's next run asks the
judge again for them and appends what it answers, and an idle worker starts that run once they
are `ASSAY_JUDGE_RETRY_AFTER` seconds old (storage/review_judging.py). An item waiting so is
decided (uncertainty, sampling) only once it is judged.

A session-scope queue's items are judged by `review_sessions.judge_session_items`, on whole
sessions.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from assay.platform import criteria_rules
from assay.platform.server.jobs.calls import GatedRun, not_answered
from assay.platform.server.jobs.claims import LostClaim, claimed_by
from assay.platform.server.jobs.judging import judge_traces
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import CriteriaRepo
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.review_judging import fold_down_again, is_down, retry_after
from assay.platform.server.storage.review_sampling import most_unsure
from assay.platform.server.storage.traces import TraceRepo

log = logging.getLogger("assay.platform.worker")
CHUNK = 16
DOWN_LEFT = (
    "score(s) were stored as EndpointDown errors without asking it; the judge is asked again for "
    "them by the queue's next judge run, which an idle worker starts after ASSAY_JUDGE_RETRY_AFTER "
    "seconds (300 by default) if items entering the queue have not started one first"
)


class QueueJudgeRun(GatedRun):
    """`run`: True when every item present at the start is scored; False when asked to stop
    first; `ModelsDown` when the judge went down (its items' scores say `EndpointDown`)."""

    left = DOWN_LEFT

    def _check_claim(self, session: Any) -> None:
        if claimed_by(session, self.claim.job_id) != self.owner:
            raise LostClaim(f"job {self.claim.job_id} was taken over")

    async def _run(self) -> bool:
        project = self.claim.project_id
        with self.state.transaction() as session:
            queue = QueueRepo(session, project).find_by_id(self.claim.queue_id)
            if queue is None or not queue.judge_model or not queue.criteria:
                return True  # deleted, or no longer judged: nothing to do
            names, model = list(queue.criteria), queue.judge_model
            rows = CriteriaRepo(session, project).by_names(names)
            saved = {r.name: {f: getattr(r, f) for f in criteria_rules.FIELDS} for r in rows}
            scope = queue.scope
        if scope == "session":  # whole sessions: jobs/review_sessions.py
            from assay.platform.server.jobs.review_sessions import judge_session_items

            return await judge_session_items(self, names, saved, model)
        after, due = 0, self.due_before()
        while True:
            if self.should_stop():
                return False
            with self.state.transaction() as session:
                queues = QueueRepo(session, project)
                chunk, after = queues.judging_chunk(self.claim.queue_id, after, CHUNK)
                if not chunk:
                    return True
                scored = queues.judged(self.claim.queue_id, [t.id for t in chunk], due)
            for name in names:
                todo = [t for t in chunk if (t.id, name) not in scored]
                if todo:
                    outcomes = await self._score(saved.get(name), name, todo, model)
                    self._store(name, todo, outcomes, model, saved.get(name))
            self._decide(names, [t.id for t in chunk])

    def _decide(self, names: list[str], trace_ids: list[str]) -> None:
        """With the chunk judged, each item's uncertainty (the most unsure of its criteria) and,
        when the queue samples, whether it is kept for review (storage/review_sampling.py). An
        item with a criterion left `EndpointDown` waits: its judge is asked again later."""
        with self.state.transaction() as session:
            self._check_claim(session)
            queue = QueueRepo(session, self.claim.project_id).find_by_id(self.claim.queue_id)
            if queue is None:
                return
            latest = TraceRepo(session, self.claim.project_id).latest_scores(trace_ids)
            own = {
                trace_id: [
                    score.outcome or {}
                    for name, score in latest[trace_id].items()
                    if name in names and score.queue_id == queue.id
                ]
                for trace_id in trace_ids
            }
            unsure = {
                trace_id: most_unsure(outcomes)
                for trace_id, outcomes in own.items()
                if not any(is_down(o) for o in outcomes)
            }
            QueueRepo(session, self.claim.project_id).decide(queue, unsure)

    async def _score(
        self,
        criterion: dict[str, Any] | None,
        name: str,
        todo: list[models.LoggedTrace],
        model: str,
    ) -> list[dict[str, Any]]:
        outcomes = await judge_traces(
            criterion, name, todo, self.models.judge(model), f"queue {self.claim.queue_id}"
        )
        return self.waiting(model, outcomes)

    def due_before(self) -> datetime:
        """`EndpointDown` scores older than this are asked again by this run; newer ones wait
        for the idle worker's retry, so a judge that stays down is not asked (and a row stored)
        per item on every run that new items start."""
        return datetime.now(timezone.utc) - retry_after()

    def waiting(self, model: str, outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Once the judge is down for this run, every outcome saying it did not answer (the
        calls that tripped the gate too: a 5xx, a timeout) is stored as `EndpointDown`, so it is
        asked again rather than kept as the item's final score; they count as left."""
        if self.models.is_down(model):
            outcomes = [_as_down(o) if not_answered(o) and not is_down(o) else o for o in outcomes]
        self.models.gate.skipped += sum(is_down(o) for o in outcomes)
        return outcomes

    def _store(
        self,
        name: str,
        todo: list[models.LoggedTrace],
        outcomes: list[dict[str, Any]],
        model: str,
        criterion: dict[str, Any] | None,
    ) -> None:
        function = criterion is not None and criterion["criteria_type"] == "function"
        source = f"function:{name}" if function else f"judge:{model}"
        rows = [
            {
                "trace_id": t.id,
                "criterion": name,
                "value": o.get("value") if o["status"] == "ok" else None,
                "outcome": o,
                "source": source[:1000],
                "queue_id": self.claim.queue_id,
            }
            for t, o in zip(todo, outcomes, strict=True)
        ]
        with self.state.transaction() as session:
            self._check_claim(session)
            # a judge still down: its waiting rows are updated, not added again
            rows = fold_down_again(
                session, self.claim.project_id, self.claim.queue_id, "trace", rows
            )
            TraceRepo(session, self.claim.project_id).add_scores(rows)


def _as_down(outcome: dict[str, Any]) -> dict[str, Any]:
    why = f"{outcome.get('error_type')}: {outcome.get('error_message')}"
    return {**outcome, "error_type": "EndpointDown", "error_message": why[:2000]}


__all__ = ["QueueJudgeRun"]
