"""The `online_eval` job: judge the traces an online evaluator has taken, each once.

Claimed and kept by the job worker like the other jobs. It walks the evaluator's pending rows of
its current version in the order they were taken; per chunk it judges every criterion of each
trace with the library (`judging.judge_traces`: `assay.aevaluate` with the library's `Criteria`,
function criteria with RE2) and stores the outcomes through `storage.evaluator_runs`, which
moves each row out of `pending` and appends its scores in one transaction, after checking the
claim. A job that stops or dies leaves the unstored rows pending and the next claim judges them
(the response cache answers the calls already made); a row stored is never judged again. With a
daily budget, a chunk is cut to what is left of the day's, and once it is spent the pending rows
are `skipped_budget` with the reason. The judge goes through the run's gate
(`calls.GatedModels`): once it is down for the run, the rest is walked in large steps without
asking it, each row `judge_down` with the judge's failure as its reason (no score stored), and the
job ends with `ModelsDown`; the next run (a new trace, a resume, a backfill) makes those rows
pending again first, so each is scored once, when the judge answers. A paused (or deleted)
evaluator ends the job. A session-scope evaluator's job judges settled sessions instead
(`online_sessions.py`).
"""

from __future__ import annotations

from typing import Any

from assay.platform import criteria_rules
from assay.platform.server.jobs.calls import GatedRun
from assay.platform.server.jobs.judging import judge_traces
from assay.platform.server.storage import models
from assay.platform.server.storage.evaluator_runs import EvaluationRuns, Judged
from assay.platform.server.storage.evaluators import EvaluatorRepo, score_source
from assay.platform.server.storage.repos import CriteriaRepo

CHUNK = 16
SKIP_CHUNK = 500
DOWN_LEFT = (
    "trace(s) or session(s) were left `judge_down` without asking it; the evaluator's next run "
    "(a new trace, a resume, a backfill, or an idle worker after ASSAY_JUDGE_RETRY_AFTER) "
    "judges them once it answers"
)


class OnlineEvaluatorRun(GatedRun):
    """`run`: True when no pending row is left (or the evaluator is paused); False when asked to
    stop first; `ModelsDown` when the judge went down (its rows are `judge_down`)."""

    left = DOWN_LEFT

    def _evaluator(self, session: Any) -> models.OnlineEvaluator | None:
        evaluator = EvaluatorRepo(session, self.claim.project_id).find_by_id(
            self.claim.evaluator_id
        )
        return evaluator if evaluator is not None and evaluator.status == "active" else None

    async def _run(self) -> bool:
        with self.state.transaction() as session:
            evaluator = self._evaluator(session)
            scope = None if evaluator is None else evaluator.scope
            if evaluator is not None:  # what an earlier run's judge did not answer: judged now
                self._check_claim(session)
                EvaluationRuns(session, self.claim.project_id).retry_down(evaluator)
        if scope == "session":  # whole sessions, once each has settled
            from assay.platform.server.jobs.online_sessions import judge_sessions

            return await judge_sessions(self)
        project = self.claim.project_id
        after = 0
        while True:
            if self.should_stop():
                return False
            with self.state.transaction() as session:
                evaluator = self._evaluator(session)  # read again: a pause or a new version
                if evaluator is None:
                    return True
                runs = EvaluationRuns(session, project)
                left = runs.budget_left(evaluator)
                # a spent budget, or a judge down for the run, goes in large steps: nothing is
                # asked of the judge then
                size = CHUNK if left is None else min(CHUNK, left) if left else SKIP_CHUNK
                if self.models.is_down(evaluator.judge_model):
                    size = SKIP_CHUNK
                chunk = runs.pending(evaluator.id, evaluator.version, after, size)
                if not chunk:
                    return True
                if left == 0:  # the day's budget is spent: these are skipped, with the reason
                    self._check_claim(session)
                    runs.skip(evaluator, [ident for ident, _t in chunk])
                    after = chunk[-1][0]
                    continue
                names, model = list(evaluator.criteria or []), evaluator.judge_model
                rows = CriteriaRepo(session, project).by_names(names)
                saved = {r.name: {f: getattr(r, f) for f in criteria_rules.FIELDS} for r in rows}
                source = score_source(evaluator)[:1000]
            after = chunk[-1][0]
            traces = [trace for _ident, trace in chunk]
            scores: dict[str, list[dict[str, Any]]] = {t.id: [] for t in traces}
            for name in names:
                outcomes = await judge_traces(
                    saved.get(name),
                    name,
                    traces,
                    self.models.judge(model),
                    f"online evaluator {self.claim.evaluator_id}",
                )
                for trace, outcome in zip(traces, outcomes, strict=True):
                    scores[trace.id].append(
                        {
                            "trace_id": trace.id,
                            "criterion": name,
                            "value": outcome.get("value") if outcome["status"] == "ok" else None,
                            "outcome": outcome,
                            "source": source,
                            "queue_id": None,
                        }
                    )
            judged = [
                Judged(
                    ident,
                    trace.id,
                    scores[trace.id],
                    self.models.unanswered(model, [r["outcome"] for r in scores[trace.id]]),
                )
                for ident, trace in chunk
            ]
            self.models.gate.skipped += sum(j.down is not None for j in judged)
            with self.state.transaction() as session:
                self._check_claim(session)
                EvaluationRuns(session, project).store(self.claim.evaluator_id, judged)


__all__ = ["CHUNK", "SKIP_CHUNK", "OnlineEvaluatorRun"]
