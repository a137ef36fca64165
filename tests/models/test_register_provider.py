"""A provider added by name is one file and one call: model strings then reach it like the built-ins."""

from __future__ import annotations

import pytest

from assay.errors import UsageError
from assay.models import llm_factory, register_provider
from assay.models.providers.openai_compat import OpenAICompatible


def test_a_registered_provider_is_built_from_its_model_strings(server):
    seen = {}

    def build(model, *, base_url, api_key, timeout, **options):
        seen.update(model=model, base_url=base_url, timeout=timeout)
        # Our pretend in-house gateway speaks the OpenAI protocol at the fake server's address.
        return OpenAICompatible(
            model, base_url=server.url, api_key="in-house", timeout=timeout, name="gateway"
        )

    register_provider("Gateway", build)
    llm = llm_factory("gateway/team-judge", cache=False, timeout=7)

    assert llm.generate("hello").text
    assert seen == {"model": "team-judge", "base_url": None, "timeout": 7}
    assert server.chat_requests[-1].body["model"] == "team-judge"
    assert llm.identity()["provider"] == "gateway"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("openai", "built in"),
        ("azure", "built in"),
        ("a/b", "plain word"),
        ("", "non-empty"),
    ],
)
def test_built_in_or_malformed_names_are_refused(kind, message):
    with pytest.raises(UsageError, match=message):
        register_provider(kind, lambda *a, **k: None)


def test_a_builder_that_returns_something_else_is_a_clear_error():
    register_provider("broken-builder", lambda model, **kw: "not a provider")
    with pytest.raises(UsageError, match="returned a str, not a Provider"):
        llm_factory("broken-builder/x", cache=False)
