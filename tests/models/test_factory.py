"""Model strings, credentials from the environment, and which endpoint a factory-built model calls."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import MissingCredentials, UsageError
from assay.models import embedding_factory, llm_factory, parse_model_string
from tests.models.fake_openai import ok

ALL_KEYS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "OLLAMA_HOST",
)


@pytest.fixture
def clean_env(monkeypatch):
    for name in ALL_KEYS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        ("openai/gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        ("anthropic/claude-3-5-haiku-latest", ("anthropic", "claude-3-5-haiku-latest", None)),
        ("ollama/llama3.1", ("ollama", "llama3.1", None)),
        ("vllm/Qwen2.5-7B@http://host:8000/v1", ("vllm", "Qwen2.5-7B", "http://host:8000/v1")),
        (
            "vllm/test-model@http://127.0.0.1:5123/v1",
            ("vllm", "test-model", "http://127.0.0.1:5123/v1"),
        ),
        (
            "llamacpp/phi-3@http://localhost:8080/v1",
            ("llamacpp", "phi-3", "http://localhost:8080/v1"),
        ),
        ("lmstudio/qwen2.5-7b-instruct", ("lmstudio", "qwen2.5-7b-instruct", None)),
        (
            "openrouter/meta-llama/llama-3.1-8b-instruct",
            ("openrouter", "meta-llama/llama-3.1-8b-instruct", None),
        ),
        ("litellm/bedrock/anthropic.claude-3", ("litellm", "bedrock/anthropic.claude-3", None)),
        ("local", ("local", "local", None)),
        ("  openai/gpt-4o  ", ("openai", "gpt-4o", None)),
        ("VLLM/Model@http://h:1/v1", ("vllm", "Model", "http://h:1/v1")),
        # A Hugging Face style name is a model name, not a provider.
        ("Qwen/Qwen2.5-7B-Instruct", ("openai", "Qwen/Qwen2.5-7B-Instruct", None)),
        # An '@' not followed by a URL is part of the name.
        ("my-model@v2", ("openai", "my-model@v2", None)),
    ],
)
def test_model_strings(model, expected):
    assert parse_model_string(model) == expected


def test_an_explicit_provider_wins_over_the_prefix():
    assert parse_model_string("gpt-4o", provider="vllm") == ("vllm", "gpt-4o", None)
    assert parse_model_string("openai/gpt-4o", provider="litellm") == (
        "litellm",
        "openai/gpt-4o",
        None,
    )


@pytest.mark.parametrize("model", ["", "   "])
def test_an_empty_model_string_is_a_usage_error(model):
    with pytest.raises(UsageError):
        parse_model_string(model)


def test_openai_without_a_key_names_the_variable_before_any_request(server, clean_env):
    with pytest.raises(MissingCredentials) as caught:
        llm_factory("openai/gpt-4o-mini", cache=False)

    assert caught.value.variable == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" in str(caught.value)
    assert server.count == 0


def test_openai_embeddings_without_a_key_name_the_variable(clean_env):
    with pytest.raises(MissingCredentials) as caught:
        embedding_factory("openai/text-embedding-3-small", cache=False)
    assert caught.value.variable == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
        ("openrouter/some/model", "OPENROUTER_API_KEY"),
    ],
)
def test_other_providers_name_their_variable(clean_env, model, variable):
    with pytest.raises(MissingCredentials) as caught:
        llm_factory(model, cache=False)
    assert caught.value.variable == variable
    assert variable in str(caught.value)


def test_openai_base_url_and_api_key_from_the_environment_are_honoured(server, clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-test-123")
    clean_env.setenv("OPENAI_BASE_URL", server.url)
    server.default = ok("from the env endpoint")
    llm = llm_factory("openai/gpt-4o-mini", cache=False)

    assert asyncio.run(llm.agenerate("hi")).text == "from the env endpoint"
    [request] = server.chat_requests
    assert request.body["model"] == "gpt-4o-mini"
    assert request.headers["authorization"] == "Bearer sk-test-123"


def test_a_bare_model_name_is_an_openai_model(server, clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-bare")
    clean_env.setenv("OPENAI_BASE_URL", server.url)
    llm = llm_factory("gpt-4o-mini", cache=False)

    asyncio.run(llm.agenerate("hi"))
    assert server.chat_requests[0].body["model"] == "gpt-4o-mini"


def test_arguments_override_the_environment(server, clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-from-env")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    llm = llm_factory("openai/gpt-4o-mini", base_url=server.url, api_key="sk-argument", cache=False)

    asyncio.run(llm.agenerate("hi"))
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-argument"


def test_a_custom_openai_endpoint_needs_no_key(server, clean_env):
    llm = llm_factory("openai/served-model", base_url=server.url, cache=False)
    asyncio.run(llm.agenerate("hi"))
    assert server.chat_requests[0].body["model"] == "served-model"


def test_vllm_uses_the_url_in_the_model_string_and_a_placeholder_key(server, clean_env):
    llm = llm_factory(f"vllm/test-model@{server.url}", cache=False)
    asyncio.run(llm.agenerate("hi"))
    [request] = server.chat_requests
    assert request.body["model"] == "test-model"
    assert request.headers["authorization"] == "Bearer EMPTY"


def test_vllm_without_an_address_is_a_usage_error(clean_env):
    with pytest.raises(UsageError, match="address"):
        llm_factory("vllm/test-model", cache=False)


def test_ollama_honours_ollama_host(server, clean_env):
    clean_env.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
    llm = llm_factory("ollama/llama3.1", cache=False)
    asyncio.run(llm.agenerate("hi"))
    assert server.chat_requests[0].body["model"] == "llama3.1"


def test_an_unknown_provider_is_a_usage_error(clean_env):
    with pytest.raises(UsageError, match="unknown provider"):
        llm_factory("some-model", provider="nonexistent", cache=False)


def test_extra_factory_arguments_become_default_request_parameters(server, clean_env):
    llm = llm_factory(
        f"vllm/test-model@{server.url}",
        cache=False,
        max_tokens=77,
        seed=3,
        guided_choice=["yes", "no"],
    )

    async def scenario():
        await llm.agenerate("first")
        await llm.agenerate("second", temperature=0.5, max_tokens=12)

    asyncio.run(scenario())
    first, second = (r.body for r in server.chat_requests)
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.0, 77, 3)
    assert first["guided_choice"] == ["yes", "no"]  # provider-specific knobs travel in the body
    assert (second["temperature"], second["max_tokens"], second["seed"]) == (0.5, 12, 3)


def test_an_openai_client_can_be_passed_in(server, clean_env):
    import openai

    client = openai.AsyncOpenAI(api_key="sk-client", base_url=server.url, max_retries=0)
    llm = llm_factory("test-model", client=client, cache=False)

    assert asyncio.run(llm.agenerate("hi")).text == '{"score": 1.0, "reason": "fine"}'
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-client"


def test_a_synchronous_openai_client_can_be_passed_in(server, clean_env):
    import openai

    client = openai.OpenAI(api_key="sk-sync", base_url=server.url, max_retries=0)
    llm = llm_factory("test-model", client=client, cache=False)

    assert asyncio.run(llm.agenerate("hi")).text == '{"score": 1.0, "reason": "fine"}'
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-sync"


def test_the_local_judge_always_bounds_an_answer(tmp_path):
    # llama.cpp writes until its context is full when no max_tokens is sent; the factory sets one.
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF")  # never loaded: the server starts on the first call
    llm = llm_factory("local", model_path=str(weights))
    assert llm.default_params["max_tokens"] == 1024 and llm.max_output_tokens == 2048
    assert (
        llm_factory("local", model_path=str(weights), max_tokens=99).default_params["max_tokens"]
        == 99
    )
