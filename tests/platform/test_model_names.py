"""Model names as the seed writes them: a known bare name reaches its own provider, and a model the
server could never ask is refused when the work is submitted (422 naming the field), not cell by
cell once a job runs."""

from __future__ import annotations

import pytest

from assay.models.factory import make_provider
from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.model_names import check_model, routed
from assay.platform.server.storage.experiments import FINISHED
from tests.platform.test_experiments import behaviour

KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def no_keys(monkeypatch):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("written", "asked"),
    [
        ("claude-3-sonnet-20240229", "anthropic/claude-3-sonnet-20240229"),
        ("llama3-8b-8192", "groq/llama3-8b-8192"),
        ("mixtral-8x7b-32768", "groq/mixtral-8x7b-32768"),
        ("llama-3.1-8b-instant", "groq/llama-3.1-8b-instant"),
        ("gpt-4", "openai/gpt-4"),
        ("o3-mini", "openai/o3-mini"),
        ("gemini-1.5-pro", "gemini/gemini-1.5-pro"),
        ("gpt-4@http://127.0.0.1:9/v1", "openai/gpt-4@http://127.0.0.1:9/v1"),
        # already prefixed, the embedded judge, and unknown bare names are left as written
        ("anthropic/claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku-latest"),
        ("ollama/llama3-8b-8192", "ollama/llama3-8b-8192"),
        ("local", "local"),
        ("my-finetune", "my-finetune"),
        ("llama3.1", "llama3.1"),
    ],
)
def test_seed_names_get_their_providers_prefix(written, asked):
    assert routed(written) == asked


def test_routed_names_build_their_own_providers(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    claude = make_provider(routed("claude-3-sonnet-20240229"))
    assert type(claude).__name__ == "AnthropicProvider"
    assert claude.model == "claude-3-sonnet-20240229"
    groq = make_provider(routed("llama3-8b-8192"))
    assert groq.name == "groq" and groq.model == "llama3-8b-8192"
    assert "api.groq.com" in groq.base_url


def test_check_names_the_field_and_the_variable(no_keys):
    with pytest.raises(ApiError) as claude:
        check_model("judge_model", "claude-3-sonnet-20240229")
    assert claude.value.status == 422
    assert claude.value.field == "judge_model"
    assert "ANTHROPIC_API_KEY" in str(claude.value) and "anthropic/" in str(claude.value)
    with pytest.raises(ApiError) as bare:
        check_model("cohorts[1].generator_model", "my-finetune")
    assert bare.value.field == "cohorts[1].generator_model"
    assert "OPENAI_API_KEY" in str(bare.value) and "openai/…@http" in str(bare.value)
    with pytest.raises(ApiError) as prefix:
        check_model("judge_model", "nosuch/model")
    # an unknown prefix is not a provider: the whole string is an OpenAI model name, needing a key
    assert "OPENAI_API_KEY" in str(prefix.value)
    check_model("judge_model", "")  # the server's default judge is not a remote model
    check_model("judge_model", "openai/x@http://127.0.0.1:9/v1")  # a keyless local server


def _seed(api, generator_model):
    dataset = api.post(
        "/datasets",
        json={
            "name": "d",
            "examples": [{"question": "Capital of France?", "ground_truth_answer": "Paris"}],
        },
    )
    assert dataset.status_code == 201, dataset.text
    task = api.post("/tasks", json={"name": "t", "generator_model": generator_model})
    criterion = api.post(
        "/criteria",
        json={
            "name": "c",
            "output_type": "bool",
            "criteria_type": "llm_judge",
            "header": "Is the answer right?",
            "bool_true": "right",
            "bool_false": "wrong",
        },
    )
    assert task.status_code == 201 and criterion.status_code == 201, (task.text, criterion.text)
    return dataset.json()["id"], task.json()["id"], criterion.json()["id"]


def test_submission_refuses_models_the_server_cannot_ask(live, no_keys, fake):
    fake.default = behaviour()  # answers generation and judging well at once
    with live.client(live.key()) as api:
        dataset_id, task_id, criterion_id = _seed(api, "claude-3-sonnet-20240229")
        body = {
            "name": "e",
            "dataset_id": dataset_id,
            "task_id": task_id,
            "criteria_ids": [criterion_id],
            "judge_model": fake.model_string("judge"),
        }
        # a cohort whose model is '' uses the task's, so the task's field is named
        cohort_default = {"name": "a", "generator_model": ""}
        refused = api.post("/experiments", json={**body, "cohorts": [cohort_default]})
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["field"] == "task.generator_model"
        assert "ANTHROPIC_API_KEY" in error["message"]
        groq = {"name": "b", "generator_model": "llama3-8b-8192"}
        refused = api.post(
            "/experiments",
            json={
                **body,
                "cohorts": [{"name": "a", "generator_model": fake.model_string("g")}, groq],
            },
        )
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == "cohorts[1].generator_model"
        assert "GROQ_API_KEY" in refused.json()["error"]["message"]
        judged_by_gpt4 = {
            **body,
            "judge_model": "gpt-4",
            "cohorts": [{"name": "a", "generator_model": fake.model_string("g")}],
        }
        refused = api.post("/experiments", json=judged_by_gpt4)
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == "judge_model"
        queue = api.post(
            "/review-queues",
            json={"name": "q", "condition": "", "criteria": ["c"], "judge_model": "gpt-4"},
        )
        assert queue.status_code == 422 and queue.json()["error"]["field"] == "judge_model"
        # nothing half-made: no experiment and no queue exist
        assert api.get("/experiments").json()["items"] == []
        assert api.get("/review-queues").json()["items"] == []
        # a model the server can ask is accepted
        fine = {**body, "cohorts": [{"name": "a", "generator_model": fake.model_string("g")}]}
        accepted = api.post("/experiments", json=fine)
        assert accepted.status_code == 202, accepted.text
        # cancelled at once, its fake answering without delay meanwhile: no call of it can be
        # left in flight to retry a closed port on the server's experiment worker after this test
        ident = accepted.json()["id"]
        assert api.post(f"/experiments/{ident}/cancel").json()["status"] in FINISHED
