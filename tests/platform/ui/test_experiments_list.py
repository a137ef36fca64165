"""The experiments list names each experiment's cohorts in its Cohorts column and counts its
criteria in their own (the column used to show the criteria count under "Cohorts")."""

from __future__ import annotations

import re

from assay.platform.server.storage.experiments import FINISHED
from tests.platform.test_experiments import behaviour
from tests.platform.ui.conftest import five_point_criterion, make_user, sign_in


def test_the_list_shows_cohorts_and_criteria_apart(live, fake):
    fake.default = behaviour()
    user = make_user(live)
    five_point_criterion(user)
    with user.api() as api:
        dataset = api.post(
            "/datasets", json={"name": "d", "examples": [{"question": "Capital of France?"}]}
        ).json()
        task = api.post("/tasks", json={"name": "t", "generator_model": ""}).json()
        criteria = api.get("/criteria").json()["items"]
        body = {
            "name": "two cohorts",
            "dataset_id": dataset["id"],
            "task_id": task["id"],
            "criteria_ids": [c["id"] for c in criteria],
            "judge_model": fake.model_string("judge"),
            "cohorts": [
                {"name": "terse", "generator_model": fake.model_string("gen-a")},
                {"name": "chatty", "generator_model": fake.model_string("gen-b")},
            ],
        }
        made = api.post("/experiments", json=body)
        assert made.status_code == 202, made.text
        # cancelled at once (the fake answers without delay, so nothing is left in flight)
        cancelled = api.post(f"/experiments/{made.json()['id']}/cancel").json()["status"]
        assert cancelled in FINISHED
    page = sign_in(user).get(f"{user.base}/experiments").text
    row = re.search(r"<tr><td><a[^>]*>two cohorts</a>.*?</tr>", page, re.S)
    assert row is not None, page
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)
    assert cells[3] == "terse, chatty" and cells[4] == str(len(criteria))
    assert "<th>Cohorts</th>" in page and ">Criteria</th>" in page
