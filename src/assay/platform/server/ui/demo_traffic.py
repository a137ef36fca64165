"""Two weeks of a support bot's traffic for the demo project (`demo.seed`), so its dashboard has
something to show: a few dozen traces a day on two models, with latency, tokens, cost
(`metadata.cost`), a few failed calls, the scores of an online evaluator (`relevance`, paused:
Relevance 1-5 and Correct yes/no on 70% of the calls, the last two hours still pending) and some
reviewers' labels. Three days ago the bot had a bad day (slower, more errors, lower scores),
which the charts should make plain. Seeded with a fixed random seed: every demo looks alike."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from assay.platform.server.schemas.traces import TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.traces import TraceRepo

DAYS = 14
# the online evaluator that scored the traffic (paused in the demo: no judge is called)
SAMPLE_RATE = 0.7
EVALUATOR: dict[str, Any] = {
    "name": "relevance",
    "condition": "'chat' IN tags",
    "sample_rate": SAMPLE_RATE,
    "criteria": ["Relevance", "Correct"],
    "judge_model": "demo/judge",
}
BAD_DAY = 3  # days ago
QUESTIONS = (
    "How do I reset my password?",
    "Can I export my data as CSV?",
    "Why was I charged twice?",
    "Do you support SSO?",
    "How do I add a teammate?",
    "Where is my invoice?",
)
# model: (share of the traffic, median latency in ms, price per input token, per output token)
MODELS = {
    "demo/support-bot": (0.7, 900.0, 2.5e-6, 1e-5),
    "demo/support-bot-mini": (0.3, 380.0, 1.5e-7, 6e-7),
}


def _moments(rng: random.Random, now: datetime) -> list[datetime]:
    """When the traces came: more on weekdays and in working hours (UTC), none in the future."""
    found = []
    for back in range(DAYS, -1, -1):
        day = (now - timedelta(days=back)).replace(hour=0, minute=0, second=0, microsecond=0)
        count = rng.randint(35, 55) if day.weekday() < 5 else rng.randint(10, 20)
        for _ in range(count):
            hour = min(23, max(0, int(rng.gauss(13, 4))))
            moment = day + timedelta(hours=hour, minutes=rng.randint(0, 59))
            if moment < now - timedelta(minutes=45):
                found.append(moment)
    return sorted(found)


def _trace(rng: random.Random, moment: datetime, bad: bool) -> tuple[dict[str, Any], float]:
    model = (
        "demo/support-bot"
        if rng.random() < MODELS["demo/support-bot"][0]
        else ("demo/support-bot-mini")
    )
    _share, median, per_in, per_out = MODELS[model]
    tokens_in, tokens_out = rng.randint(80, 900), rng.randint(10, 220)
    latency = median * rng.lognormvariate(0, 0.45) * (2.2 if bad else 1.0)
    failed = rng.random() < (0.14 if bad else 0.02)
    question = rng.choice(QUESTIONS)
    body: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "created_at": moment.isoformat(),
        "input": question,
        "output": ""
        if failed
        else f"Here is how: see the help centre article on {question[7:-1]}.",
        "model": model,
        "usage": {"input_tokens": tokens_in, "output_tokens": 0 if failed else tokens_out},
        "latency_ms": round(latency, 1),
        "metadata": {
            "channel": "chat",
            "cost": round(tokens_in * per_in + tokens_out * per_out, 6),
        },
        "tags": ["chat"],
    }
    if failed:
        body["error"] = "APITimeoutError: the model did not answer in 30 s"
    relevance = min(5.0, max(1.0, round(rng.gauss(3.1 if bad else 4.2, 0.9))))
    return body, relevance


def seed_traffic(session: Any, pid: int, now: datetime | None = None) -> int:
    """Store the traffic, its scores and labels in project `pid`; returns how many traces."""
    rng = random.Random(41)
    now = now or datetime.now(timezone.utc)
    bad_day = (now - timedelta(days=BAD_DAY)).date()
    bodies, scores, labels, runs = [], [], [], []
    for moment in _moments(rng, now):
        body, relevance = _trace(rng, moment, moment.date() == bad_day)
        bodies.append(TraceIn.model_validate(body))
        if rng.random() > SAMPLE_RATE:
            continue  # the online evaluator samples 70% of the calls
        if "error" in body or moment > now - timedelta(hours=2):
            runs.append((body["id"], "error" if "error" in body else "pending"))
            continue  # nothing to judge in a failed call; the judge has not caught up yet
        runs.append((body["id"], "scored"))
        for criterion, value in (("Relevance", relevance), ("Correct", float(relevance >= 3))):
            scores.append(
                {
                    "trace_id": body["id"],
                    "criterion": criterion,
                    "value": value,
                    "outcome": {"status": "ok", "value": value, "reason": "demo judge"},
                    "source": f"evaluator:{EVALUATOR['name']}@v1",
                    "queue_id": None,
                }
            )
        if rng.random() < 0.12:
            labels.append((body["id"], relevance, moment + timedelta(hours=rng.randint(1, 20))))
    repo = TraceRepo(session, pid)
    repo.ingest(bodies)
    for start in range(0, len(scores), 200):
        repo.add_scores(scores[start : start + 200])
    evaluator = models.OnlineEvaluator(project_id=pid, status="paused", version=1, **EVALUATOR)
    session.add(evaluator)
    session.flush()
    session.add_all(
        models.OnlineEvaluation(
            project_id=pid,
            evaluator_id=evaluator.id,
            evaluator_version=1,
            trace_id=trace_id,
            status=state,
            entered_at=now,
            judged_at=None if state == "pending" else now,
        )
        for trace_id, state in runs
    )
    for trace_id, relevance, when in labels:
        human = min(5.0, max(1.0, relevance + rng.choice((-1, 0, 0, 0, 1))))
        session.add(
            models.TraceLabel(
                project_id=pid,
                trace_id=trace_id,
                criterion="Relevance",
                value=human,
                author="user:demo",
                comment="",
                created_at=min(when, now),
            )
        )
    session.flush()
    return len(bodies)


__all__ = ["seed_traffic"]
