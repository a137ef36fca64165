"""The trace explorer over plain HTTP against the live server on SQLite and PostgreSQL: the traces
table's columns (a failed call marked, not a blank output), its sorts, time range and quick
filters, paging both ways with the position and count; the trace page's waterfall (bars placed
by start and duration, nested by parent) with unknown values left out, and its actions (label,
add to a dataset, send to a queue); the sessions list and a session read as a conversation;
an error page keeps the navigation."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from html import unescape

from tests.platform.ui.conftest import csrf_in, five_point_criterion, ingest, make_user, sign_in

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).isoformat()


def rows_of(html: str) -> list[str]:
    return re.findall(r'<tr data-trace="([^"]+)"', html)


def links_of(html: str) -> dict[str, str]:
    found = re.findall(r'<a href="([^"]+)" id="page-(first|newer|older)"', html)
    return {kind: unescape(url) for url, kind in found}


def test_the_traces_table_filters_sorts_and_pages(live, monkeypatch):
    from assay.platform.server.ui import traces as ui_traces

    user = make_user(live)
    # sent in time order: the table's "newest" is the order of arrival
    old, slow, failed, cheap = ingest(
        user,
        {"created_at": at(60 * 24 * 3), "input": "old question", "output": "old answer"},
        {
            "created_at": at(5),
            "input": "slow question",
            "output": "slow answer",
            "model": "big-model",
            "latency_ms": 4200.0,
            "usage": {"input_tokens": 900, "output_tokens": 100},
            "metadata": {"cost": 0.0125, "session_id": "s-1"},
        },
        {
            "created_at": at(4),
            "input": "failing question",
            "output": None,
            "model": "small-model",
            "latency_ms": 80.0,
            "error": "RateLimitError: slow down",
        },
        {
            "created_at": at(3),
            "input": "cheap question",
            "output": "cheap answer",
            "model": "small-model",
            "latency_ms": 300.0,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    )
    scored = user.api().post(
        f"/traces/{cheap}/scores", json={"criterion": "Relevance", "value": 0.2}
    )
    assert scored.status_code in (200, 201), scored.text
    user.api().post(f"/traces/{slow}/scores", json={"criterion": "Relevance", "value": 0.9})
    client = sign_in(user)
    base = f"{user.base}/traces"

    html = client.get(base).text
    assert rows_of(html) == [cheap, failed, slow, old]  # newest first
    assert "4.20 s" in html and "1,000" in html and "0.0125" in html
    failed_row = html[html.index(f'data-trace="{failed}"') :].split("</tr>")[0]
    assert 'class="failed"' in html and "status-error" in failed_row
    assert "RateLimitError: slow down" in failed_row  # the error shows where the output would
    assert "/sessions/s-1" in html
    assert 'data-total="4"' in html and "Traces 1–4" in html
    assert f'<a href="{base}/{cheap}">' in html  # each row opens its trace
    assert f'hx-get="{base}/check"' in html

    by_latency = client.get(base, params={"sort": "latency"}).text
    assert rows_of(by_latency) == [slow, cheap, failed]  # no latency: left out of this sort
    assert "traces without one left out" in by_latency and 'data-total="3"' in by_latency
    fastest = client.get(base, params={"sort": "latency", "order": "asc"}).text
    assert rows_of(fastest) == [failed, cheap, slow]
    by_tokens = client.get(base, params={"sort": "tokens"}).text
    assert rows_of(by_tokens) == [slow, cheap]
    oldest = client.get(base, params={"sort": "created", "order": "asc"}).text
    assert rows_of(oldest) == [old, slow, failed, cheap]

    assert rows_of(client.get(base, params={"range": "24h"}).text) == [cheap, failed, slow]
    custom = {"range": "custom", "since": at(60 * 24 * 4)[:16], "until": at(60)[:16]}
    assert rows_of(client.get(base, params=custom).text) == [old]
    assert rows_of(client.get(base, params={"model": "small-model"}).text) == [cheap, failed]
    assert rows_of(client.get(base, params={"status": "error"}).text) == [failed]
    assert rows_of(client.get(base, params={"status": "ok"}).text) == [cheap, slow, old]
    low = client.get(base, params={"criterion": "Relevance", "below": "0.5"}).text
    assert rows_of(low) == [cheap]
    both = {"condition": "model = 'small-model'", "status": "ok"}
    assert rows_of(client.get(base, params=both).text) == [cheap]
    # the placeholder's example is a condition the language accepts
    placeholder = re.search(r'placeholder="e\.g\. ([^"]+)"', html).group(1)
    check = client.get(f"{base}/check", params={"condition": unescape(placeholder)})
    assert 'data-valid="true"' in check.text

    for bad, field in (
        ({"status": "broken"}, "status"),
        ({"sort": "cost"}, "sort"),
        ({"range": "2y"}, "range"),
        ({"criterion": "Relevance", "below": "low"}, "below"),
        ({"range": "custom", "since": "yesterday"}, "since"),
        ({"sort": "latency", "offset": "999999"}, "offset"),
    ):
        answer = client.get(base, params=bad)
        assert answer.status_code == 200 and "data-problem" in answer.text, bad
        assert re.search(rf"data-problem>{field}:", answer.text), (bad, answer.text[-800:])

    monkeypatch.setattr(ui_traces, "PAGE", 2)
    first = client.get(base).text
    assert rows_of(first) == [cheap, failed] and "Traces 1–2" in first
    assert set(links_of(first)) == {"older"}
    second = client.get(links_of(first)["older"]).text
    assert rows_of(second) == [slow, old] and "Traces 3–4" in second
    assert set(links_of(second)) == {"first", "newer"}
    back = client.get(links_of(second)["newer"]).text
    assert rows_of(back) == [cheap, failed] and "Traces 1–2" in back
    sorted_first = client.get(base, params={"sort": "latency"}).text
    sorted_next = client.get(links_of(sorted_first)["older"]).text
    assert rows_of(sorted_next) == [failed] and "Traces 3–3" in sorted_next
    assert rows_of(client.get(links_of(sorted_next)["newer"]).text) == [slow, cheap]


def test_the_trace_page_draws_a_waterfall_and_acts(live):
    user = make_user(live)
    start = NOW - timedelta(seconds=10)

    def t(ms: float) -> str:
        return (start + timedelta(milliseconds=ms)).isoformat()

    (trace_id,) = ingest(
        user,
        {
            "created_at": t(0),
            "input": "q",
            "output": "a",
            "spans": [
                {
                    "id": "root",
                    "name": "agent",
                    "kind": "function",
                    "started_at": t(0),
                    "ended_at": t(1000),
                },
                {
                    "id": "r",
                    "parent_id": "root",
                    "name": "search",
                    "kind": "retrieval",
                    "started_at": t(0),
                    "ended_at": t(250),
                },
                {
                    "id": "l",
                    "parent_id": "root",
                    "name": "chat",
                    "kind": "llm",
                    "started_at": t(250),
                    "ended_at": t(1000),
                },
                {"id": "x", "parent_id": "l", "name": "no times", "kind": "other"},
            ],
        },
    )
    queue = user.api().post(
        "/review-queues",
        json={"name": "spot checks", "condition": "model = 'none'", "criteria": []},
    )
    assert queue.status_code == 201, queue.text
    five_point_criterion(user)  # "Helpfulness", its levels named "level 1" ... "level 5"
    scored = user.api().post(
        f"/traces/{trace_id}/scores", json={"criterion": "Helpfulness", "value": 4}
    )
    assert scored.status_code in (200, 201), scored.text
    client = sign_in(user)
    url = f"{user.base}/traces/{trace_id}"
    html = client.get(url).text
    assert "level 4 (4)" in html and "4.0" not in html  # a judge's value shows as its label
    assert "Helpfulness level 4 (4)" in client.get(f"{user.base}/traces").text
    names = re.findall(
        r'data-depth="(\d)" data-kind="[a-z]+">\s*<summary class="wf-row">\s*<span class="wf-name"><span class="kind[^"]*">[a-z]+</span> ([^<]+)<',
        html,
    )
    assert names == [("0", "agent"), ("1", "search"), ("1", "chat"), ("2", "no times")]
    bars = re.findall(r'<rect class="wf-fill[^"]*" x="(\d+)" y="3" width="(\d+)"', html)
    assert bars == [("0", "1000"), ("0", "250"), ("250", "750")]  # the untimed span has none
    assert re.findall(r'<span class="wf-ms">([^<]*)</span>', html) == [
        "1.00 s",
        "250 ms",
        "750 ms",
        "",
    ]
    facts = html[
        html.index('id="trace-facts"') : html.index("</p>", html.index('id="trace-facts"'))
    ]
    assert "?" not in facts and "model" not in facts and "tokens" not in facts  # unknown: left out
    assert "Raw request and response" not in html  # none recorded: no empty boxes

    token = csrf_in(html)
    labelled = client.post(
        f"{url}/label",
        data={"csrf_token": token, "criterion": "Tone", "value": "4", "comment": "ok"},
    )
    assert labelled.status_code == 303 and "done=" in labelled.headers["location"]
    assert "Done: labelled Tone: 4" in client.get(labelled.headers["location"]).text
    (label,) = user.api().get(f"/traces/{trace_id}/labels").json()["items"]
    assert label["value"] == 4 and label["author"] == f"user:{user.username}"

    added = client.post(f"{url}/to-dataset", data={"csrf_token": token, "dataset": "from traces"})
    assert added.status_code == 303
    datasets = user.api().get("/datasets").json()["items"]
    assert [d["name"] for d in datasets] == ["from traces"]

    sent = client.post(
        f"{url}/to-queue", data={"csrf_token": token, "queue_id": str(queue.json()["id"])}
    )
    assert sent.status_code == 303 and "sent%20to%20review%20queue" in sent.headers["location"]
    items = user.api().get("/review-queues/spot checks/traces").json()["items"]
    assert [i["id"] for i in items] == [trace_id]

    refused = client.post(f"{url}/label", data={"csrf_token": token, "criterion": "", "value": "x"})
    assert refused.status_code == 422 and "criterion" in refused.text
    assert 'href="/ui/p/' in refused.text and ">Traces</a>" in refused.text  # navigation kept
    missing = client.get(f"{user.base}/traces/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404 and ">Sessions</a>" in missing.text
    unknown = client.get(f"{user.base}/no-such-page")  # no page code ran: still the navigation
    assert unknown.status_code == 404 and ">Traces</a>" in unknown.text


def test_sessions_list_and_a_session_as_a_conversation(live):
    user = make_user(live)
    ingest(
        user,
        {
            "created_at": at(10),
            "input": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "Weather in Paris?"},
            ],
            "output": "Sunny, 21 °C.",
            "metadata": {"session_id": "chat-1"},
            "spans": [
                {"id": "a", "name": "turn", "kind": "function"},
                {
                    "id": "b",
                    "parent_id": "a",
                    "name": "get_weather",
                    "kind": "function",
                    "input": {"city": "Paris"},
                    "output": {"sky": "sunny"},
                },
            ],
        },
        {
            "created_at": at(8),
            "input": "And in Rome?",
            "output": None,
            "error": "Timeout after 30 s",
            "metadata": {"session_id": "chat-1"},
        },
        {
            "created_at": at(2),
            "input": "hi",
            "output": "hello",
            "metadata": {"session_id": "chat-2"},
        },
    )
    client = sign_in(user)
    listing = client.get(f"{user.base}/sessions").text
    assert re.findall(r'<tr data-session="([^"]+)"', listing) == ["chat-2", "chat-1"]
    assert f'<a href="{user.base}/sessions/chat-1">' in listing
    assert 'data-total="2"' in listing

    page = client.get(f"{user.base}/sessions/chat-1").text
    turns = re.findall(r'<li class="turn( failed)?" data-trace', page)
    assert turns == ["", " failed"]
    said = re.findall(
        r'<div class="message (\w+)[^"]*"><span class="who">\w+</span><div class="said[^"]*">([^<]*)</div>',
        page,
    )
    assert said == [
        ("user", "Weather in Paris?"),
        ("assistant", "Sunny, 21 °C."),
        ("user", "And in Rome?"),
        ("assistant", "Timeout after 30 s"),
    ]
    assert "<code>get_weather</code>" in page and "sunny" in page
    assert client.get(f"{user.base}/sessions/nope").status_code == 404
    other = make_user(live, fresh=True)
    assert sign_in(other).get(f"{user.base}/sessions/chat-1").status_code == 404
