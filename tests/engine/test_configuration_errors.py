"""Configuration mistakes fail up front, before any work, in words that say what to do (issue #14, item 8)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pytest

from assay import UsageError, evaluate
from assay.errors import MissingCredentials
from assay.metrics.base import Metric
from assay.models.embeddings import Embeddings
from assay.models.llm import LLM
from assay.schema.outcome import MetricResult
from tests.engine.scripted_metrics import ScriptedMetric

SEEN: dict[str, Any] = {}


@dataclass(kw_only=True)
class ModelProbe(Metric):
    """Records the models the engine handed it; makes no call."""

    name: str = "test_model_probe"
    llm: Any = None
    embeddings: Any = None
    needs_llm = True
    needs_embeddings = True
    required_fields = ("response",)

    async def _ascore(self, *, response: str) -> MetricResult:
        SEEN["llm"], SEEN["embeddings"] = self.llm, self.embeddings
        return MetricResult(1.0)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    SEEN.clear()
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


ROWS = [{"response": "1"}]


def probe(**options):
    return evaluate(ROWS, [ModelProbe()], show_progress=False, **options)


# -- llm= and embeddings= ----------------------------------------------------------------------------


def test_a_model_string_is_resolved_with_llm_factory(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    probe(llm="openai/gpt-4o-mini", embeddings="openai/text-embedding-3-small")
    assert isinstance(SEEN["llm"], LLM) and SEEN["llm"].provider.model == "gpt-4o-mini"
    assert isinstance(SEEN["embeddings"], Embeddings)


def test_a_model_string_without_credentials_fails_before_any_work(tmp_path):
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        probe(llm="openai/gpt-4o-mini", run_dir=tmp_path / "run")
    assert SEEN == {} and not (tmp_path / "run").exists()


def test_a_raw_openai_client_is_refused_with_the_line_to_write():
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="sk-test")
    with pytest.raises(UsageError) as info:
        probe(llm=client)
    message = str(info.value)
    assert "OpenAI" in message and "llm_factory('gpt-4o-mini', client=client)" in message
    assert "\n" not in message and SEEN == {}


def test_an_async_openai_client_is_refused_too():
    openai = pytest.importorskip("openai")
    with pytest.raises(UsageError, match=r"AsyncOpenAI.*client=client"):
        probe(llm=openai.AsyncOpenAI(api_key="sk-test"))


@pytest.mark.parametrize("value", [42, {"model": "gpt-4o-mini"}, object()])
def test_any_other_object_is_refused_naming_its_type_and_what_is_accepted(value):
    with pytest.raises(UsageError) as info:
        probe(llm=value)
    message = str(info.value)
    assert type(value).__name__ in message
    assert "llm_factory" in message and "'openai/gpt-4o-mini'" in message


def test_embeddings_given_as_llm_and_the_other_way_round(tmp_path):
    from assay.models import ScriptedProvider

    llm = LLM(ScriptedProvider(["x"]))
    with pytest.raises(UsageError, match="embeddings="):
        probe(embeddings=llm, llm=llm)
    with pytest.raises(UsageError, match=r"embeddings=.*not llm="):
        probe(llm=Embeddings(ScriptedProvider(["x"])))


def test_a_metrics_own_model_string_is_resolved_too(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    evaluate(
        ROWS,
        [ModelProbe(llm="openai/gpt-4o-mini", embeddings="openai/text-embedding-3-small")],
        show_progress=False,
    )
    assert isinstance(SEEN["llm"], LLM) and isinstance(SEEN["embeddings"], Embeddings)


def test_a_metrics_own_client_is_refused():
    openai = pytest.importorskip("openai")
    with pytest.raises(UsageError, match="test_model_probe"):
        evaluate(ROWS, [ModelProbe(llm=openai.OpenAI(api_key="sk-test"))], show_progress=False)


def test_a_langchain_chat_model_is_wrapped():
    pytest.importorskip("langchain_core")
    from langchain_core.embeddings.fake import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from assay.metrics.rag.faithfulness import Faithfulness

    claims = json.dumps({"claims": ["Paris is in France."]})
    result = evaluate(
        [
            {
                "response": "Paris is in France.",
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ],
        [Faithfulness(statements="claims")],
        llm=FakeListChatModel(responses=[claims, "1. yes"]),
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0]
    probe(llm=FakeListChatModel(responses=["x"]), embeddings=DeterministicFakeEmbedding(size=4))
    assert (
        SEEN["llm"].provider.name == "langchain" and SEEN["embeddings"].provider.name == "langchain"
    )


def test_a_llamaindex_llm_is_wrapped():
    pytest.importorskip("llama_index.core")
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    probe(llm=MockLLM(max_tokens=3), embeddings=MockEmbedding(embed_dim=4))
    assert (
        SEEN["llm"].provider.name == "llamaindex"
        and SEEN["embeddings"].provider.name == "llamaindex"
    )


def test_a_langchain_embedding_model_given_as_llm_is_refused():
    pytest.importorskip("langchain_core")
    from langchain_core.embeddings.fake import DeterministicFakeEmbedding

    with pytest.raises(UsageError, match="embeddings="):
        probe(llm=DeterministicFakeEmbedding(size=4))


# -- numbers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [0, -1, math.nan, 0.0])
def test_timeout_must_be_positive(timeout, tmp_path):
    with pytest.raises(UsageError, match="timeout must be more than 0 seconds"):
        evaluate(
            ROWS, [ScriptedMetric()], timeout=timeout, run_dir=tmp_path / "run", show_progress=False
        )
    assert not (tmp_path / "run").exists()


def test_timeout_none_is_no_limit():
    assert evaluate(ROWS, [ScriptedMetric()], timeout=None, show_progress=False)[
        "test_scripted"
    ] == [1.0]


@pytest.mark.parametrize("budget", [-1, -0.01, math.nan])
def test_a_negative_budget_is_a_usage_error_before_any_work(budget, tmp_path):
    with pytest.raises(UsageError, match="budget") as info:
        evaluate(
            ROWS, [ScriptedMetric()], budget=budget, run_dir=tmp_path / "run", show_progress=False
        )
    assert "\n" not in str(info.value) and not (tmp_path / "run").exists()


def test_a_zero_budget_is_not_a_usage_error():
    result = evaluate(ROWS, [ScriptedMetric()], budget=0, show_progress=False)
    assert len(result.outcomes) == 1


# -- data ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("empty", [[], "file"])
def test_an_empty_dataset_is_a_usage_error(empty, tmp_path):
    if empty == "file":
        empty = tmp_path / "empty.jsonl"
        empty.write_text("\n")
    with pytest.raises(UsageError, match="the dataset has no rows"):
        evaluate(empty, [ScriptedMetric()], run_dir=tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_column_map_naming_an_absent_column_fails_in_evaluate():
    with pytest.raises(UsageError, match=r"'query'.*columns present: response"):
        evaluate(ROWS, [ScriptedMetric()], column_map={"user_input": "query"}, show_progress=False)
