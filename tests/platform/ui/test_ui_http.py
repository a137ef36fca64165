"""The web UI's security rules and pages over plain HTTP (httpx) against the live server, on SQLite
and PostgreSQL: sessions, CSRF, Origin, keys vs cookies, the CSP, escaping, locks, validation."""

from __future__ import annotations

import re

import httpx
from sqlalchemy import select

from assay.platform.server.storage import models
from tests.platform.ui.conftest import (
    csrf_in,
    five_point_criterion,
    ingest,
    make_user,
    sign_in,
)

XSS_INPUT = "<script>alert('in')</script> and <img src=x onerror=alert(1)>"
XSS_OUTPUT = '"><img src=x onerror="alert(2)"><b>bold?</b>'


def _queue(user, name="q", criteria=("Helpfulness",), condition=""):
    answer = user.api().post(
        "/review-queues", json={"name": name, "condition": condition, "criteria": list(criteria)}
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def _labels(user, trace_id):
    answer = user.api().get(f"/traces/{trace_id}/labels")
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]


def test_sign_in_sets_a_safe_cookie_and_stores_only_hashes(live):
    user = make_user(live, fresh=True)
    client = httpx.Client(base_url=live.base_url, timeout=30, headers={"Origin": live.base_url})
    page = client.get("/ui/login")
    answer = client.post(
        "/ui/login",
        data={
            "csrf_token": csrf_in(page.text),
            "username": user.username,
            "password": user.password,
            "next": "https://evil.example/steal",
        },
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/"  # never off-site after signing in
    cookie = next(
        v for k, v in answer.headers.multi_items() if k == "set-cookie" and "assay_session=" in v
    )
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    token = cookie.split("assay_session=", 1)[1].split(";", 1)[0]
    with live.app.state.assay.transaction() as session:
        row = session.scalar(select(models.User).where(models.User.username == user.username))
        assert row.password_hash.startswith("$argon2id$") and user.password not in row.password_hash
        hashes = list(session.scalars(select(models.UiSession.token_hash)))
    assert token not in hashes and len(hashes[-1]) == 64
    home = client.get("/ui/", follow_redirects=True)
    assert home.status_code == 200 and user.username in home.text


def test_wrong_password_and_unknown_user_are_refused(live):
    user = make_user(live)
    client = httpx.Client(base_url=live.base_url, timeout=30, headers={"Origin": live.base_url})
    for username, password in ((user.username, "wrong-password"), ("nobody-here", "whatever1")):
        token = csrf_in(client.get("/ui/login").text)
        answer = client.post(
            "/ui/login",
            data={"csrf_token": token, "username": username, "password": password},
        )
        assert answer.status_code == 401
        assert "wrong username or password" in answer.text
        assert "assay_session" not in answer.headers.get("set-cookie", "")
    assert client.get("/ui/").status_code == 303  # still signed out: sent to the login page


def test_a_post_without_the_csrf_token_is_refused_and_stores_nothing(live):
    user = make_user(live)
    five_point_criterion(user)
    (trace_id,) = ingest(user, {"input": "hi", "output": "hello"})
    queue = _queue(user)
    client = sign_in(user)
    url = f"{user.base}/queues/{queue['id']}/items/{trace_id}"
    page = client.get(url)
    assert page.status_code == 200
    for data, headers in (
        ({"c0": "4"}, {}),
        ({"c0": "4", "csrf_token": "0" * 64}, {}),
        ({"c0": "4"}, {"X-CSRF-Token": "forged"}),
    ):
        refused = client.post(url, data=data, headers=headers)
        assert refused.status_code == 403, refused.text
        assert "CSRF" in refused.text
    assert _labels(user, trace_id) == []
    accepted = client.post(url, data={"c0": "4", "csrf_token": csrf_in(page.text)})
    assert accepted.status_code == 303
    (label,) = _labels(user, trace_id)
    assert label["value"] == 4 and label["author"] == f"user:{user.username}"


def test_cross_origin_and_originless_posts_are_refused(live):
    user = make_user(live)
    five_point_criterion(user)
    (trace_id,) = ingest(user, {"input": "hi", "output": "hello"})
    queue = _queue(user)
    client = sign_in(user)
    url = f"{user.base}/queues/{queue['id']}/items/{trace_id}"
    token = csrf_in(client.get(url).text)
    data = {"c0": "5", "csrf_token": token}  # even with the right token
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": live.base_url.replace("127.0.0.1", "localhost")},
        {"Origin": "null"},
        {"Origin": "", "Referer": "http://evil.example/page"},
    ):
        refused = client.post(url, data=data, headers=headers)
        assert refused.status_code == 403, (headers, refused.text)
        assert "origin" in refused.text.lower()
    bare = httpx.post(
        live.base_url + url, data=data, cookies=client.cookies, timeout=30
    )  # no Origin, no Referer
    assert bare.status_code == 403
    assert _labels(user, trace_id) == []
    same_site_referer = client.post(
        url, data=data, headers={"Origin": "", "Referer": live.base_url + url}
    )
    assert same_site_referer.status_code == 303


def test_api_keys_are_refused_by_the_ui_and_cookies_by_the_api(live):
    user = make_user(live)
    client = sign_in(user)
    refused = httpx.get(
        live.base_url + f"{user.base}/queues",
        headers={"Authorization": f"Bearer {user.key}"},
        timeout=30,
    )
    assert refused.status_code == 401 and "API keys are not accepted" in refused.text
    refused = httpx.get(
        live.base_url + f"{user.base}/queues", headers={"X-API-Key": user.key}, timeout=30
    )
    assert refused.status_code == 401
    assert client.get(f"{user.base}/queues").status_code == 200  # the cookie works on the UI
    api = client.get("/api/v1/traces")  # ... and not on the API
    assert api.status_code == 401 and api.json()["error"]["code"] == "unauthorized"
    assert client.post("/api/v1/traces", json={"traces": []}).status_code == 401


def test_pages_carry_a_strict_csp_and_no_inline_script(live):
    user = make_user(live)
    five_point_criterion(user)
    (trace_id,) = ingest(user, {"input": "q", "output": "a", "spans": [{"id": "s", "name": "x"}]})
    queue = _queue(user)
    client = sign_in(user)
    pages = [
        "/ui/login",
        f"{user.base}/queues",
        f"{user.base}/queues/{queue['id']}",
        f"{user.base}/queues/{queue['id']}/items/{trace_id}",
        f"{user.base}/traces",
        f"{user.base}/traces/{trace_id}",
        f"{user.base}/experiments",
        f"{user.base}/datasets",
        f"{user.base}/no-such-page",
    ]
    for path in pages:
        answer = client.get(path)
        assert answer.status_code in (200, 404), path
        csp = answer.headers["content-security-policy"]
        assert (
            "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
        )
        assert answer.headers["x-frame-options"] == "DENY"
        inline = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", answer.text)
        assert inline == [], path
        assert re.findall(r"<[^>]*\son[a-z]+\s*=", answer.text) == [], path  # no handler attributes


def test_injected_html_in_a_trace_shows_as_text(live):
    user = make_user(live)
    five_point_criterion(user)
    (trace_id,) = ingest(
        user,
        {
            "input": XSS_INPUT,
            "output": XSS_OUTPUT,
            "contexts": ["</pre><script>alert(3)</script>"],
            "metadata": {"k": "<svg onload=alert(4)>"},
            "spans": [{"id": "s1", "name": "<img src=x onerror=alert(5)>"}],
        },
    )
    queue = _queue(user, name="<b>queue</b>")
    client = sign_in(user)
    for path in (
        f"{user.base}/traces/{trace_id}",
        f"{user.base}/queues/{queue['id']}/items/{trace_id}",
        f"{user.base}/traces",
        f"{user.base}/queues",
    ):
        html = client.get(path).text
        for raw in ("<script>alert", "<img src=x", "<svg onload", "<b>bold", "<b>queue"):
            assert raw not in html, (path, raw)
    html = client.get(f"{user.base}/traces/{trace_id}").text
    assert "&lt;script&gt;alert(&#39;in&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_condition_check_names_the_problem(live):
    user = make_user(live)
    ingest(user, {"input": "a", "output": "b", "model": "m1"}, {"input": "c", "model": "m2"})
    client = sign_in(user)
    good = client.get(f"{user.base}/traces/check", params={"condition": "model = 'm1'"})
    assert good.status_code == 200 and 'data-valid="true"' in good.text
    assert "data-count" not in good.text  # checking never counts: a scan, made when asked
    counted = client.get(f"{user.base}/traces/count", params={"condition": "model = 'm1'"})
    assert counted.status_code == 200 and "1 trace matches" in counted.text
    every = client.get(f"{user.base}/traces/count")
    assert "2 traces in all" in every.text
    broken = client.get(f"{user.base}/traces/count", params={"condition": "model = "})
    assert broken.status_code == 200 and "line 1" in broken.text
    bad = client.get(f"{user.base}/traces/check", params={"condition": "model = "})
    assert bad.status_code == 200 and 'data-valid="false"' in bad.text
    assert "line 1" in bad.text and "column" in bad.text
    unknown = client.get(f"{user.base}/traces/check", params={"condition": "nonsense > 1"})
    assert 'data-valid="false"' in unknown.text and "nonsense" in unknown.text
    listed = client.get(f"{user.base}/traces", params={"condition": "model = 'm2'"})
    assert listed.status_code == 200 and "m2" in listed.text and ">m1<" not in listed.text


def test_the_filtered_page_never_counts_and_scans_a_bounded_window(live, monkeypatch):
    """The page lists without counting; a count stops past COUNT_MOST; a page looks at no more
    than SCAN traces, and the next page goes on below them until every match was listed."""
    from assay.platform.server.ui import traces as ui_traces

    user = make_user(live)
    old = ingest(user, *({"input": f"old {n}", "model": "rare"} for n in range(3)))
    ingest(user, *({"input": f"new {n}", "model": "common"} for n in range(12)))
    client = sign_in(user)
    monkeypatch.setattr(ui_traces, "COUNT_MOST", 10)
    many = client.get(f"{user.base}/traces/count", params={"condition": "model = 'common'"})
    assert 'data-count="more"' in many.text and "more than 10 traces match" in many.text
    few = client.get(f"{user.base}/traces/count", params={"condition": "model = 'rare'"})
    assert "3 traces match" in few.text

    monkeypatch.setattr(ui_traces, "SCAN", 5)
    found, pages, url = [], 0, f"{user.base}/traces?condition=model%20%3D%20%27rare%27"
    while url:
        html = client.get(url).text
        pages += 1
        assert pages < 20
        found += re.findall(r"old \d", html)
        more = re.search(r'href="([^"]+cursor=\d+)"', html)
        url = more.group(1).replace("&amp;", "&") if more else ""
        if more and "Search older traces" in html:
            assert 'id="scan-note"' in html
    assert sorted(found) == ["old 0", "old 1", "old 2"] and pages >= 3
    assert len(old) == 3
    plain = client.get(f"{user.base}/traces").text  # no condition: the newest 50, no window
    assert plain.count("new ") == 12 and 'id="scan-note"' not in plain


def test_a_queue_made_from_a_filter_holds_the_matching_traces(live):
    user = make_user(live)
    ingest(user, {"input": "x", "model": "keep"}, {"input": "y", "model": "drop"})
    client = sign_in(user)
    token = csrf_in(client.get(f"{user.base}/traces?condition=model+%3D+%27keep%27").text)
    made = client.post(
        f"{user.base}/queues",
        data={"csrf_token": token, "name": "kept", "condition": "model = 'keep'", "criteria": "ok"},
    )
    assert made.status_code == 303
    queue = user.api().get("/review-queues/kept").json()
    assert queue["condition"] == "model = 'keep'" and queue["criteria"] == ["ok"]
    assert queue["items"] == {"pending": 1, "done": 0}
    bad = client.post(
        f"{user.base}/queues",
        data={"csrf_token": token, "name": "broken", "condition": "model =", "criteria": ""},
    )
    assert bad.status_code == 422 and "condition" in bad.text
    assert user.api().get("/review-queues/broken").status_code == 404


def test_a_project_the_user_is_not_in_is_not_found(live):
    user, other = make_user(live), make_user(live, fresh=True)
    client = sign_in(user)
    assert client.get(f"{other.base}/queues").status_code == 404
    assert client.get(f"{other.base}/traces").status_code == 404


def test_an_item_is_locked_to_the_reviewer_who_opened_it(live):
    first = make_user(live)
    five_point_criterion(first)
    second = make_user(live, first.project, fresh=True)
    ids = ingest(first, {"input": "one"}, {"input": "two"})
    queue = _queue(first)
    a, b = sign_in(first), sign_in(second)
    item = f"{first.base}/queues/{queue['id']}/items/{ids[0]}"
    assert "held for you" in a.get(item).text
    page = b.get(item)
    assert first.username in page.text and "labels you send now are refused" in page.text
    refused = b.post(item, data={"c0": "2", "csrf_token": csrf_in(page.text)})
    assert refused.status_code == 409
    assert _labels(first, ids[0]) == []
    nxt = b.get(f"{first.base}/queues/{queue['id']}/next")  # skips the held item
    assert nxt.status_code == 303 and nxt.headers["location"].endswith(ids[1])
    skipped = a.post(f"{item}/skip", data={"csrf_token": csrf_in(a.get(item).text)})
    assert skipped.status_code == 303  # released: the second reviewer may take it now
    assert "held for you" in b.get(item).text


def test_missing_labels_are_named_and_nothing_is_stored(live):
    user = make_user(live)
    five_point_criterion(user)
    (trace_id,) = ingest(user, {"input": "q"})
    queue = _queue(user, criteria=("Helpfulness", "notes"))
    client = sign_in(user)
    url = f"{user.base}/queues/{queue['id']}/items/{trace_id}"
    token = csrf_in(client.get(url).text)
    answer = client.post(url, data={"csrf_token": token, "c0": "7", "c1": ""})
    assert answer.status_code == 422
    assert "Helpfulness is a score from 1 to 5" in answer.text
    assert "choose a value for notes" in answer.text
    assert _labels(user, trace_id) == []
    done = client.post(url, data={"csrf_token": token, "c0": "3", "c1": "fine", "comment": "ok"})
    assert done.status_code == 303
    labels = {label["criterion"]: label for label in _labels(user, trace_id)}
    assert labels["Helpfulness"]["value"] == 3 and labels["notes"]["value"] == "fine"
    assert labels["notes"]["comment"] == "ok"
    assert user.api().get("/review-queues/q").json()["items"] == {"pending": 0, "done": 1}


def test_editing_the_output_keeps_a_revision(live):
    user = make_user(live)
    (trace_id,) = ingest(user, {"input": "q", "output": "first answer"})
    queue = _queue(user, criteria=())
    client = sign_in(user)
    url = f"{user.base}/queues/{queue['id']}/items/{trace_id}"
    token = csrf_in(client.get(url).text)
    edited = client.post(
        f"{url}/output", data={"csrf_token": token, "version": "1", "output": "better answer"}
    )
    assert edited.status_code == 303
    trace = user.api().get(f"/traces/{trace_id}").json()
    assert trace["output"] == "better answer" and trace["version"] == 2
    (revision,) = user.api().get(f"/traces/{trace_id}/revisions").json()["items"]
    assert revision["snapshot"]["output"] == "first answer"
    assert revision["edited_by"] == f"user:{user.username}"
    stale = client.post(
        f"{url}/output", data={"csrf_token": token, "version": "1", "output": "again"}
    )
    assert stale.status_code == 409 and "version 2" in stale.text


def test_admins_create_and_revoke_keys_and_manage_members(live):
    owner = make_user(live, role="admin")
    colleague = make_user(live, owner.project)  # the shared reviewer: a member, not an admin
    outsider = make_user(live, fresh=True)
    client = sign_in(owner)
    page = client.get(f"{owner.base}/settings")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    token = csrf_in(page.text)
    made = client.post(
        f"{owner.base}/settings/keys",
        data={"csrf_token": token, "name": "ci", "scopes": ["read"], "expires_in_days": "30"},
    )
    assert made.status_code == 201
    key = re.search(r"<code>(assay_[0-9a-f]{16}_[A-Za-z0-9_-]+)</code>", made.text).group(1)
    api = httpx.Client(
        base_url=live.base_url + "/api/v1", headers={"Authorization": f"Bearer {key}"}
    )
    assert api.get("/auth/whoami").json()["scopes"] == ["read"]
    assert key not in client.get(f"{owner.base}/settings").text  # shown once only
    key_id = key.split("_")[1]
    other_key_id = outsider.key.split("_")[1]
    refused = client.post(
        f"{owner.base}/settings/keys/revoke", data={"csrf_token": token, "key_id": other_key_id}
    )
    assert refused.status_code == 404  # another project's key
    assert outsider.api().get("/auth/whoami").status_code == 200
    revoked = client.post(
        f"{owner.base}/settings/keys/revoke", data={"csrf_token": token, "key_id": key_id}
    )
    assert revoked.status_code == 303
    assert api.get("/auth/whoami").status_code == 401
    bad = client.post(f"{owner.base}/settings/keys", data={"csrf_token": token, "scopes": ["root"]})
    assert bad.status_code == 422 and "scopes must be among" in bad.text

    added = client.post(
        f"{owner.base}/settings/members",
        data={"csrf_token": token, "username": outsider.username, "role": "member"},
    )
    assert added.status_code == 303
    assert sign_in(outsider).get(f"{owner.base}/queues").status_code == 200
    removed = client.post(
        f"{owner.base}/settings/members/remove",
        data={"csrf_token": token, "username": outsider.username},
    )
    assert removed.status_code == 303
    assert sign_in(outsider).get(f"{owner.base}/queues").status_code == 404

    other = sign_in(colleague)
    assert other.get(f"{owner.base}/settings").status_code == 403
    theirs = csrf_in(other.get(f"{owner.base}/queues").text)
    assert (
        other.post(
            f"{owner.base}/settings/keys", data={"csrf_token": theirs, "scopes": ["admin"]}
        ).status_code
        == 403
    )


def test_datasets_import_export_and_diff(live):
    import csv
    import html
    import io
    import json

    user = make_user(live)
    client = sign_in(user)
    token = csrf_in(client.get(f"{user.base}/datasets-import").text)
    csv_text = (
        "question,answer,contexts\n"
        'What is 1+1?,2,"[""one"", ""two""]"\n'
        "Capital of Peru?,Lima,Lima is the capital.\n"
    )
    made = client.post(
        f"{user.base}/datasets-import",
        data={"csrf_token": token, "name": "maths"},
        files={"file": ("maths.csv", csv_text.encode(), "text/csv")},
    )
    assert made.status_code == 303, made.text
    dataset_id = int(made.headers["location"].rsplit("/", 1)[1])
    examples = user.api().get(f"/datasets/{dataset_id}/examples").json()["items"]
    assert [
        (e["question"], e["ground_truth_answer"], e["ground_truth_context"]) for e in examples
    ] == [
        ("What is 1+1?", "2", ["one", "two"]),
        ("Capital of Peru?", "Lima", "Lima is the capital."),
    ]
    jsonl = "\n".join(
        json.dumps(e)
        for e in (
            {"question": "What is 1+1?", "ground_truth_answer": "2", "contexts": ["one", "two"]},
            {"question": "What is 2+2?", "answer": "4"},
        )
    )
    again = client.post(
        f"{user.base}/datasets-import",
        data={"csrf_token": token, "name": "maths"},
        files={"file": ("maths.jsonl", jsonl.encode(), "application/x-ndjson")},
    )
    assert again.status_code == 303
    assert user.api().get(f"/datasets/{dataset_id}").json()["latest_version"] == 2

    exported = client.get(f"{user.base}/datasets/{dataset_id}/export.csv?version=1")
    assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert rows[0] == {
        "question": "What is 1+1?",
        "ground_truth_answer": "2",
        "ground_truth_context": '["one", "two"]',
    }
    lines = client.get(f"{user.base}/datasets/{dataset_id}/export.jsonl").text.splitlines()
    assert [json.loads(line)["question"] for line in lines] == ["What is 1+1?", "What is 2+2?"]

    diff = client.get(f"{user.base}/datasets/{dataset_id}/diff?a=1&b=2").text
    assert re.findall(r'data-change="(\w+)"', diff) == ["changed"]
    assert "Capital of Peru?" in diff and "What is 2+2?" in diff and "1 example unchanged" in diff

    for name, body, problem in (
        ("bad.csv", "question,answer\n,empty question\n", "row 2, question"),
        ("bad.csv", "answer\nx\n", "needs a `question` column"),
        ("bad.jsonl", '{"question": "ok"}\nnot json\n', "line 2: not JSON"),
        ("bad.jsonl", '{"question": "q", "colour": "red"}\n', "unknown column 'colour'"),
        # what csv and json would misread silently (issue #45, 2)
        ("bad.csv", 'question,answer\nq1,"a1\nq2,a2\n', "row 2: not valid CSV"),
        (
            "bad.csv",
            "question,answer\nq1,a1\nq2,a2,extra\n",
            "row 3: 3 fields where the header has 2",
        ),
        ("bad.csv", "question,answer\nq1\n", "row 2: 1 fields where the header has 2"),
        ("bad.csv", "question,answer,answer\nq,a,b\n", "names column 'answer' twice"),
        ("bad.csv", "question,answer\n", "header but no rows"),
        (
            "bad.jsonl",
            '{"question": "q", "question": "p"}\n',
            "line 1: the key 'question' appears twice",
        ),
    ):
        refused = client.post(
            f"{user.base}/datasets-import",
            data={"csrf_token": token, "name": "broken"},
            files={"file": (name, body.encode(), "text/plain")},
        )
        shown = html.unescape(refused.text)
        assert refused.status_code == 422 and problem in shown, (name, shown)
    assert user.api().get("/datasets", params={"name": "broken"}).json()["items"] == []


def test_task_and_criteria_forms_validate_as_the_api_does(live):
    import html

    user = make_user(live)
    client = sign_in(user)
    token = csrf_in(client.get(f"{user.base}/criteria/new").text)
    base = {"csrf_token": token, "criteria_type": "llm_judge"}
    refused = client.post(
        f"{user.base}/criteria",
        data={**base, "name": "Tone", "output_type": "5-point", "header": "Polite?"},
    )
    assert refused.status_code == 422
    page = html.unescape(refused.text)
    assert 'data-problem="likert_score_1"' in page and "needs all five labels" in page
    assert 'value="Polite?"' in page or "Polite?" in page  # what was typed is kept
    bad_regex = client.post(
        f"{user.base}/criteria",
        data={
            **base,
            "name": "Re",
            "criteria_type": "function",
            "match_type": "regex_match",
            "match_pattern": "(a",
        },
    )
    assert bad_regex.status_code == 422 and 'data-problem="match_pattern"' in bad_regex.text
    scale = {f"likert_score_{i}": f"level {i}" for i in range(1, 6)}
    made = client.post(
        f"{user.base}/criteria",
        data={**base, "name": "Tone", "output_type": "5-point", "header": "Polite?", **scale},
    )
    assert made.status_code == 303
    (saved,) = user.api().get("/criteria", params={"name": "Tone"}).json()["items"]
    assert saved["likert_score_5"] == "level 5" and saved["validation_status"] == "valid"
    twice = client.post(
        f"{user.base}/criteria",
        data={**base, "name": "Tone", "output_type": "5-point", "header": "Polite?", **scale},
    )
    assert twice.status_code == 409 and "already exists" in html.unescape(twice.text)

    long_name = client.post(f"{user.base}/tasks", data={"csrf_token": token, "name": "x" * 201})
    assert long_name.status_code == 422 and 'data-problem="name"' in long_name.text
    task = client.post(
        f"{user.base}/tasks",
        data={
            "csrf_token": token,
            "name": "qa",
            "generator_model": "openai/x",
            "system_prompt": "Be brief.",
        },
    )
    assert task.status_code == 303
    (stored,) = user.api().get("/tasks", params={"name": "qa"}).json()["items"]
    edited = client.post(
        f"{user.base}/tasks/{stored['id']}",
        data={
            "csrf_token": token,
            "name": "qa",
            "generator_model": "openai/y",
            "system_prompt": "Be brief.",
        },
    )
    assert edited.status_code == 303
    assert user.api().get(f"/tasks/{stored['id']}").json()["generator_model"] == "openai/y"
    listed = client.get(f"{user.base}/tasks")
    assert "openai/y" in listed.text
    assert client.get(f"{user.base}/queues").status_code == 200  # not shadowed by the forms


def test_behind_a_proxy_the_public_url_is_the_origin_and_cookies_are_secure(live, monkeypatch):
    from assay.platform.server.ui.web import origin_problem

    def scope(origin):
        headers = [(b"host", b"10.0.0.5:8321")]
        if origin:
            headers.append((b"origin", origin.encode()))
        return {"type": "http", "scheme": "http", "headers": headers}

    assert origin_problem(scope("http://10.0.0.5:8321")) is None
    monkeypatch.setenv("ASSAY_PUBLIC_URL", "https://assay.example.com/")
    assert origin_problem(scope("https://assay.example.com")) is None
    assert "another origin" in origin_problem(scope("http://10.0.0.5:8321"))
    page = httpx.get(live.base_url + "/ui/login", timeout=30)
    assert "Secure" in page.headers["set-cookie"]


def test_a_dataset_change_to_an_old_version_is_refused(live):
    user = make_user(live)
    made = user.api().post("/datasets", json={"name": "d", "examples": [{"question": "q1"}]})
    dataset_id = made.json()["id"]
    client = sign_in(user)
    token = csrf_in(client.get(f"{user.base}/datasets/{dataset_id}").text)
    form = {"csrf_token": token, "base_version": "1", "position": "0", "question": "mine"}
    changed = user.api().put(
        f"/datasets/{dataset_id}", json={"name": "d", "examples": [{"question": "theirs"}]}
    )
    assert changed.json()["version"] == 2  # someone saved meanwhile
    stale = client.post(f"{user.base}/datasets/{dataset_id}/examples/edit", data=form)
    assert stale.status_code == 409 and "version 2 now" in stale.text
    blank = client.post(
        f"{user.base}/datasets/{dataset_id}/examples/add",
        data={**form, "base_version": "2", "question": "   "},
    )
    assert blank.status_code == 422 and "question" in blank.text
    (example,) = user.api().get(f"/datasets/{dataset_id}/examples").json()["items"]
    assert example["question"] == "theirs"


def test_signing_out_ends_the_session(live):
    user = make_user(live, fresh=True)
    client = sign_in(user)
    token = csrf_in(client.get(f"{user.base}/queues").text)
    cookie = client.cookies["assay_session"]
    out = client.post("/ui/logout", data={"csrf_token": token})
    assert out.status_code == 303 and out.headers["location"] == "/ui/login"
    stolen = httpx.get(
        live.base_url + f"{user.base}/queues", cookies={"assay_session": cookie}, timeout=30
    )
    assert stolen.status_code == 303 and stolen.headers["location"].startswith("/ui/login")


def test_repeated_failed_sign_ins_are_throttled(live, monkeypatch):
    from assay.platform.server.ui import login as ui_login

    # the throttle's own clock, moved by hand: three argon2 checks take longer than any short
    # real window on a loaded machine, which let the first failure age out before the fourth
    now = [1000.0]
    monkeypatch.setattr(
        ui_login, "throttle", ui_login.Throttle(limit=3, window=60.0, clock=lambda: now[0])
    )
    user = make_user(live, fresh=True)
    client = httpx.Client(base_url=live.base_url, timeout=30, headers={"Origin": live.base_url})
    token = csrf_in(client.get("/ui/login").text)

    def attempt(password):
        return client.post(
            "/ui/login",
            data={"csrf_token": token, "username": user.username, "password": password},
        )

    assert [attempt("wrong-one").status_code for _ in range(3)] == [401, 401, 401]
    refused = attempt(user.password)  # the right password, but too soon
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) == 60
    assert "too many failed sign-ins" in refused.text
    now[0] += 59.0
    assert attempt(user.password).status_code == 429  # still inside the window
    now[0] += 1.5
    assert attempt(user.password).status_code == 303
