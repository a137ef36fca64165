"""The trace page's "Replay with…" (#43 §4): the code to replay this trace, its id and model
filled in and escaped, for a traced function and for a monitored client's call alike."""

from __future__ import annotations

import html

from tests.platform.ui.conftest import ingest, make_user, sign_in


def test_the_trace_page_shows_how_to_replay_it(live):
    user = make_user(live)
    monitored, traced = ingest(
        user,
        {"input": "Q", "output": "A", "model": 'gpt-"x"', "spans": [{"id": "s", "kind": "llm"}]},
        {"input": "Q", "output": "A", "spans": [{"id": "r", "kind": "function", "name": "agent"}]},
    )
    client = sign_in(user)
    page = client.get(f"{user.base}/traces/{monitored}").text
    assert 'id="replay-with"' in page and "Replay with…" in page
    code = html.unescape(page.split('id="replay-with"')[1].split("</details>")[0])
    assert f'Trace.download(id="{monitored}")' in code
    assert 'model="gpt-"x""' in code  # shown as text, escaped in the page
    assert "gpt-&#34;x&#34;" in page or "gpt-&quot;x&quot;" in page
    other = html.unescape(client.get(f"{user.base}/traces/{traced}").text)
    assert f'Trace.download(id="{traced}")' in other and 'model="your-model"' in other
