"""RAG pipeline cohorts: a pipeline registered on the server (a real loopback HTTP endpoint here)
answers each example; its answer and retrieved contexts are the trace, judged like a model's."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assay.platform import (
    Cohort,
    Conflict,
    Experiment,
    NotFound,
    RagPipeline,
    ValidationFailed,
)
from tests.platform.test_experiments import CAPITALS, behaviour, seed_objects


class Pipeline:
    """A loopback RAG pipeline: retrieves the capital's sentence and answers with it; the question
    about Spain gets a 500, so one generation fails."""

    def __init__(self) -> None:
        self.questions: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.questions.append(body["question"])
                country = next(c for c in CAPITALS if c in body["question"])
                if country == "Spain":
                    reply, status = b'{"detail": "index offline"}', 500
                else:
                    capital = CAPITALS[country]
                    answer = {
                        "answer": f"The capital is {capital}.",
                        "contexts": [f"{capital} is the capital of {country}.", "Unrelated text."],
                    }
                    reply, status = json.dumps(answer).encode(), 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/answer"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def pipeline():
    served = Pipeline()
    yield served
    served.stop()


def test_a_pipeline_cohort_is_answered_by_the_registered_endpoint(sdk, live, fake, pipeline):
    fake.default = behaviour()
    dataset, task, criteria = seed_objects(fake, "-rag")
    # registered through the SDK, as a RagMetrics user would (issue #41)
    hyde = RagPipeline(name="hyde", url=pipeline.url).save()
    assert hyde.id is not None
    assert RagPipeline(name="hyde", url=pipeline.url).save().id == hyde.id  # the same: no change
    with pytest.raises(Conflict, match="another URL or timeout"):
        RagPipeline(name="hyde", url=pipeline.url + "/other").save()
    assert [(p.name, p.url) for p in RagPipeline.list()] == [("hyde", pipeline.url)]
    with live.client(sdk.login.__globals__["_client"].key) as client:
        again = client.post("/rag-pipelines", json={"name": "hyde", "url": pipeline.url})
        assert again.status_code == 409  # the API itself refuses a taken name

    experiment = Experiment(
        name="RAG vs model",
        dataset=dataset,
        task=task,
        cohorts=[
            Cohort(name="Pipeline", rag_pipeline="hyde"),
            Cohort(name="Model", generator_model=fake.model_string("gen-b")),
        ],
        criteria=criteria,
        judge_model=fake.model_string("judge"),
    )
    results = experiment.run(poll_interval=0.1)

    assert results["status"] == "completed"
    assert sorted(pipeline.questions) == sorted(f"What is the capital of {c}?" for c in CAPITALS)
    rows = [r for r in results["rows"] if r["cohort"] == "Pipeline"]
    france = next(r for r in rows if "France" in r["question"])
    assert france["answer"] == "The capital is Paris."
    assert france["contexts"] == ["Paris is the capital of France.", "Unrelated text."]
    spain = next(r for r in rows if "Spain" in r["question"])
    assert spain["answer"] is None and "HTTP 500" in spain["generation_error"]["message"]
    scores = results["scores"]["Pipeline"]["Names a capital"]
    assert scores["n"] == 4 and scores["n_scored"] == 3 and scores["mean"] == 1.0
    # no model was asked to generate for the pipeline cohort
    generated = [r.body["model"] for r in fake.chat_requests if r.body["model"].startswith("gen")]
    assert generated == ["gen-b"] * 4


def test_pipelines_register_list_and_delete_through_the_sdk(sdk):
    RagPipeline(name="basic-rag", url="http://127.0.0.1:9/rag", timeout_s=5).save()
    assert [(p.name, p.timeout_s) for p in RagPipeline.list()] == [("basic-rag", 5)]
    with pytest.raises(ValidationFailed, match="url"):
        RagPipeline(name="bad", url="file:///etc/passwd").save()
    RagPipeline.delete("basic-rag")
    assert RagPipeline.list() == []
    with pytest.raises(NotFound, match="no RAG pipeline named 'basic-rag'"):
        RagPipeline.delete("basic-rag")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "p", "url": "file:///etc/passwd"}, "url"),
        ({"name": "p", "url": "http://user:secret@127.0.0.1/x"}, "url"),
        ({"name": "p", "url": "http://127.0.0.1/x", "timeout_s": 0}, "timeout_s"),
        ({"name": "", "url": "http://127.0.0.1/x"}, "name"),
    ],
)
def test_bad_pipelines_are_refused_naming_the_field(sdk, live, body, field):
    with live.client(sdk.login.__globals__["_client"].key) as client:
        refused = client.post("/rag-pipelines", json=body)
        assert refused.status_code == 422, refused.text
        assert field in refused.json()["error"]["message"]
        assert client.get("/rag-pipelines").json()["items"] == []
        assert client.delete("/rag-pipelines/nope").status_code == 404
