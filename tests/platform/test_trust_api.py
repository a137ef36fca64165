"""How far to trust a criterion's scores (#42 §1, §3, §4 on the platform), in `GET
/api/v1/dashboard`'s `trust` field, against a live server on SQLite and PostgreSQL with seeded
scores and labels. Every figure is pinned against `assay.stats` computed here from the seeded
values, independently of the server:

- a criterion judged by the embedded judge (scores sent with source `judge:local`) shows the
  shipped faithfulness card; one whose judge has no card, or whose scores do not name a judge,
  says "no card for this judge" and why;
- the judge's mean, the labels' mean and the PPI-corrected mean with its interval equal
  `assay.stats.ppi_mean` on the same rows, inverse-probability weighted when the labels came
  through a sampling queue (probabilities stored on the queue's items);
- labels that disagree with the judge raise the alert (the recent figure's interval lies wholly
  below the card's), labels that agree do not, with the figures equal to the stratified
  bootstrap of `assay.stats` on the same rows.

Also: the existing fields are still there, and another project's rows are never counted."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import update

from assay.benchmark.cards import judge_card
from assay.stats import ppi_mean
from assay.stats.bootstrap import bootstrap
from assay.stats.classification import roc_auc


def _traces(api, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    now = datetime.now(timezone.utc)
    traces = [
        {
            "id": str(uuid.uuid4()),
            "created_at": (now - timedelta(hours=rng.uniform(1, 150))).isoformat(),
            "input": f"question {i}",
            "output": f"answer {i}",
        }
        for i in range(count)
    ]
    assert api.post("/traces", json={"traces": traces}).status_code == 202
    return [t["id"] for t in traces]


def _scores(api, rows: list[dict]) -> None:
    for start in range(0, len(rows), 500):
        answer = api.post("/traces/scores", json={"scores": rows[start : start + 500]})
        assert answer.status_code == 201, answer.text


def _label(api, trace_id: str, criterion: str, value, queue: str | None = None) -> None:
    body = {"criterion": criterion, "value": value} | ({"queue": queue} if queue else {})
    answer = api.post(f"/traces/{trace_id}/labels", json=body)
    assert answer.status_code == 201, answer.text


def _bulk_labels(live, api, criterion: str, labels: dict, queue_id: int | None = None) -> None:
    """Many labels at once, written as the label route writes them (one POST each would cost
    seconds here); the route itself is exercised by `_label`."""
    from sqlalchemy import select

    from assay.platform.server.storage import models

    trace_id = next(iter(labels))
    with live.app.state.assay.transaction() as session:
        project_id = session.scalar(
            select(models.LoggedTrace.project_id).where(models.LoggedTrace.id == trace_id)
        )
        session.add_all(
            models.TraceLabel(
                project_id=project_id,
                trace_id=t,
                criterion=criterion,
                value=v,
                author="key:test",
                queue_id=queue_id,
            )
            for t, v in labels.items()
        )


@pytest.fixture(scope="module")
def seeded(live):
    """Project A: `faithfulness` judged by `judge:local`, labelled at random (the judge disagrees
    with people); `helpful` (a saved 5-point criterion judged by an OpenAI model) labelled
    through a sampling queue; `plain` scored with no judge named. Project B: `faithfulness`
    whose labels follow the judge."""
    rng = random.Random(11)
    api = live.client(live.key())
    ids = _traces(api, 60, seed=1)
    faith = {t: round(rng.random(), 3) for t in ids}
    helpful = {t: float(rng.randint(1, 5)) for t in ids}
    made = api.post(
        "/criteria",
        json={
            "name": "helpful",
            "output_type": "5-point",
            "header": "How helpful is the answer?",
            **{f"likert_score_{i}": f"level {i}" for i in range(1, 6)},
        },
    )
    assert made.status_code == 201, made.text
    queue = api.post("/review-queues", json={"name": "Sampled", "criteria": ["helpful"]})
    assert queue.status_code == 201, queue.text
    _scores(
        api,
        [{"trace_id": t, "criterion": "faithfulness", "value": 0.5, "source": "judge:local"}
         for t in ids[:20]]  # replaced below: the latest score counts
        + [{"trace_id": t, "criterion": "plain", "value": 0.5} for t in ids]
        + [{"trace_id": t, "criterion": "answer_relevancy", "value": 0.7, "source": "judge:local"}
           for t in ids],  # no labels: its sources are counted in the database
    )  # fmt: skip
    _scores(
        api,
        [{"trace_id": t, "criterion": "faithfulness", "value": v, "source": "judge:local"}
         for t, v in faith.items()]
        + [{"trace_id": t, "criterion": "helpful", "value": v, "source": "judge:openai/gpt-4o-mini"}
           for t, v in helpful.items()],
    )  # fmt: skip
    random_labels = {t: rng.random() < 0.5 for t in ids[:40]}
    _label(api, ids[0], "faithfulness", random_labels[ids[0]])
    _bulk_labels(live, api, "faithfulness", {t: random_labels[t] for t in ids[1:40]})
    _label(api, ids[0], "plain", "good")  # a categorical label: counted, never a number
    helpful_labels = {t: rng.randint(1, 5) for t in ids[:24]}
    chances = {t: rng.choice([0.2, 0.5, 1.0]) for t in helpful_labels}
    for t, value in helpful_labels.items():
        _label(api, t, "helpful", value, queue="Sampled")
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        for t, chance in chances.items():
            session.execute(
                update(models.ReviewQueueItem)
                .where(
                    models.ReviewQueueItem.queue_id == queue.json()["id"],
                    models.ReviewQueueItem.trace_id == t,
                )
                .values(inclusion_probability=chance)
            )

    other = live.client(live.key())
    other_ids = _traces(other, 40, seed=2)
    good_faith = {t: round(rng.random(), 3) for t in other_ids}
    _scores(
        other,
        [{"trace_id": t, "criterion": "faithfulness", "value": v, "source": "judge:local"}
         for t, v in good_faith.items()],
    )  # fmt: skip
    # people agree with the judge, but for two traces an uncertainty-sampling queue served
    # (weighed 4 times each: a chance of review of 1 in 4)
    agreeing = {t: good_faith[t] >= 0.5 for t in other_ids[:30]}
    for t in other_ids[:2]:
        agreeing[t] = not agreeing[t]
    unsure = other.post("/review-queues", json={"name": "Unsure", "criteria": ["faithfulness"]})
    assert unsure.status_code == 201, unsure.text
    _bulk_labels(live, other, "faithfulness", {t: agreeing[t] for t in other_ids[2:20]})
    sampled = {t: agreeing[t] for t in [*other_ids[:2], *other_ids[20:30]]}
    _bulk_labels(live, other, "faithfulness", sampled, queue_id=unsure.json()["id"])
    other_chances = {t: 0.25 if i < 2 else 0.5 for i, t in enumerate(sampled)}
    with live.app.state.assay.transaction() as session:
        for t, chance in other_chances.items():
            session.execute(
                update(models.ReviewQueueItem)
                .where(
                    models.ReviewQueueItem.queue_id == unsure.json()["id"],
                    models.ReviewQueueItem.trace_id == t,
                )
                .values(inclusion_probability=chance)
            )
    return {
        "api": api,
        "other": other,
        "dashboard": api.get("/dashboard", params={"range": "7d"}).json(),
        "other_dashboard": other.get("/dashboard", params={"range": "7d"}).json(),
        "faith": faith,
        "random_labels": random_labels,
        "helpful": helpful,
        "helpful_labels": helpful_labels,
        "chances": chances,
        "good_faith": good_faith,
        "agreeing": agreeing,
        "other_weights": {t: 1 / other_chances.get(t, 1.0) for t in agreeing},
    }


def _expected_ppi(scores: dict, labels: dict, weights: dict | None = None):
    labelled = sorted(labels)
    return ppi_mean(
        [float(labels[t]) for t in labelled],
        [scores[t] for t in labelled],
        [scores[t] for t in sorted(scores) if t not in labels],
        weights=[weights[t] for t in labelled] if weights else None,
    )


def _expected_auc(scores: dict, labels: dict):
    rows = sorted(labels)
    y = [int(labels[t]) for t in rows]
    return bootstrap(roc_auc, [y, [scores[t] for t in rows]], resamples=2000, seed=0, strata=y)


def _pairwise_auc(y, s, w):
    """ROC-AUC with weights, pair by pair (the server computes it with numpy)."""
    positives = [(si, wi) for yi, si, wi in zip(y, s, w, strict=True) if yi == 1]
    negatives = [(si, wi) for yi, si, wi in zip(y, s, w, strict=True) if yi == 0]
    num = sum(
        wp * wn * (1.0 if sp > sn else 0.5 if sp == sn else 0.0)
        for sp, wp in positives
        for sn, wn in negatives
    )
    den = sum(wp for _, wp in positives) * sum(wn for _, wn in negatives)
    return num / den if den else None


def _expected_weighted_auc(scores: dict, labels: dict, weights: dict):
    rows = sorted(labels)
    y = [int(labels[t]) for t in rows]
    columns = [y, [scores[t] for t in rows], [weights[t] for t in rows]]
    return bootstrap(_pairwise_auc, columns, resamples=2000, seed=0, strata=y)


def test_the_card_of_the_judge_and_no_card_otherwise(seeded):
    got = seeded["dashboard"]
    assert {"traces", "scores", "labels", "series", "models"} <= set(got)  # nothing broken
    trust = got["trust"]
    assert set(trust) == {"faithfulness", "helpful", "plain", "answer_relevancy"}
    relevancy = trust["answer_relevancy"]
    assert relevancy["estimate"] is None and relevancy["alert"] is None
    [(source, count)] = relevancy["judge"]["sources"].items()
    assert source.endswith(":judge:local") and count == 60
    expected = judge_card("answer_relevancy", "local")
    assert expected is not None and relevancy["judge"]["card"]["headline"] == expected.headline()
    faith = trust["faithfulness"]["judge"]
    card = judge_card("faithfulness", "local")
    assert card is not None  # shipped with the package
    assert faith["model"] == "local" and faith["metric"] == "faithfulness"
    assert faith["no_card"] is None
    [(source, count)] = faith["sources"].items()
    assert source.startswith("key:") and source.endswith(":judge:local") and count == 60
    shown = faith["card"]
    assert shown["headline"] == card.headline()
    assert [(m["label"], m["value"], m["low"], m["high"], m["n"]) for m in shown["agreement"]] == [
        (m.label, m.value, m.low, m.high, m.n) for m in card.agreement
    ]
    assert shown["unmeasured"] == card.unmeasured and shown["stability"] == []

    helpful = trust["helpful"]["judge"]
    assert helpful["card"] is None and helpful["model"] == "openai/gpt-4o-mini"
    assert helpful["no_card"].startswith("no card for this judge: nothing was measured for")
    assert "saved criterion" in helpful["no_card"] and "gpt-4o-mini" in helpful["no_card"]
    assert trust["helpful"]["saved_criterion_id"] is not None
    plain = trust["plain"]["judge"]
    assert plain["card"] is None and "without naming their judge" in plain["no_card"]


def test_the_estimate_corrected_by_labels_is_ppi(seeded):
    trust = seeded["dashboard"]["trust"]
    faith = trust["faithfulness"]["estimate"]
    expected = _expected_ppi(seeded["faith"], seeded["random_labels"])
    assert faith["labelled"] == 40 and faith["judged"] == 60 and faith["weighted"] is False
    assert faith["judge_mean"] == pytest.approx(expected.judge_mean)
    assert faith["labels_mean"] == pytest.approx(expected.labels_mean)
    assert (faith["value"], faith["low"], faith["high"]) == pytest.approx(
        (expected.value, expected.low, expected.high)
    )
    assert faith["low"] < faith["value"] < faith["high"]
    if expected.labels_to_halve is None:
        assert faith["more_labels_to_halve"] is None
    else:
        assert faith["more_labels_to_halve"] == expected.labels_to_halve - 40

    helpful = trust["helpful"]["estimate"]
    weights = {t: 1 / p for t, p in seeded["chances"].items()}
    expected = _expected_ppi(seeded["helpful"], seeded["helpful_labels"], weights)
    unweighted = _expected_ppi(seeded["helpful"], seeded["helpful_labels"])
    assert helpful["weighted"] is True and helpful["labelled"] == 24
    assert (helpful["value"], helpful["low"], helpful["high"]) == pytest.approx(
        (expected.value, expected.low, expected.high)
    )
    assert helpful["value"] != pytest.approx(unweighted.value)  # the weights did something
    plain = trust["plain"]["estimate"]
    assert plain["labels_not_numbers"] == 1 and plain["labelled"] == 0 and plain["value"] is None


def test_the_alert_when_agreement_falls_below_the_card(seeded):
    card = judge_card("faithfulness", "local")
    roc = max(
        (m for m in card.agreement if m.figure in ("roc_auc", "balanced_accuracy")),
        key=lambda m: (m.split == "test", m.n, m.figure == "roc_auc"),
    )
    trust = seeded["dashboard"]["trust"]
    alert = trust["faithfulness"]["alert"]
    expected = _expected_auc(seeded["faith"], seeded["random_labels"])
    assert alert["card"]["figure"] == roc.figure == "roc_auc"
    assert (alert["card"]["low"], alert["card"]["high"]) == (roc.low, roc.high)
    recent = alert["recent"]
    assert recent["n"] == 40
    assert (recent["value"], recent["low"], recent["high"]) == pytest.approx(
        (expected.value, expected.low, expected.high)
    )
    assert expected.high < roc.low  # random labels: the whole interval is below the card's
    assert alert["status"] == "below" and "below what the judge's card promises" in alert["message"]
    assert trust["helpful"]["alert"] is None  # no card, nothing to test against

    good = seeded["other_dashboard"]["trust"]
    assert set(good) == {"faithfulness"}  # project A's criteria never leak in
    alert = good["faithfulness"]["alert"]
    weights = seeded["other_weights"]
    expected = _expected_weighted_auc(seeded["good_faith"], seeded["agreeing"], weights)
    plain = _expected_auc(seeded["good_faith"], seeded["agreeing"])
    recent = alert["recent"]
    assert recent["weighted"] is True and recent["n"] == 30
    assert (recent["value"], recent["low"], recent["high"]) == pytest.approx(
        (expected.value, expected.low, expected.high)
    )
    assert recent["value"] < plain.value  # the two sampled disagreements weigh 4 times
    assert recent["high"] >= roc.low and alert["status"] == "not_below"


def test_a_condition_narrows_the_trust_figures(seeded):
    first = next(iter(seeded["faith"]))
    got = seeded["api"].get("/dashboard", params={"range": "7d", "condition": f"id = '{first}'"})
    assert got.status_code == 200, got.text
    faith = got.json()["trust"]["faithfulness"]
    assert faith["estimate"]["judged"] == 1 and faith["estimate"]["labelled"] == 1
    assert faith["estimate"]["value"] is None  # one label: undefined, never a guess
    assert faith["alert"]["status"] == "too_few_labels"
    # a condition on the scores themselves: its subqueries never take the counted rows for theirs
    high = seeded["api"].get(
        "/dashboard", params={"range": "7d", "condition": "score.faithfulness >= 0.5"}
    )
    assert high.status_code == 200, high.text
    kept = {t: v for t, v in seeded["faith"].items() if v >= 0.5}
    estimate = high.json()["trust"]["faithfulness"]["estimate"]
    assert estimate["judged"] == len(kept)
    assert estimate["labelled"] == len(set(kept) & set(seeded["random_labels"]))
    assert estimate["judge_mean"] == pytest.approx(sum(kept.values()) / len(kept))
