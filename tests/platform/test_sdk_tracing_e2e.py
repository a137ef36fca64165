"""The seed's tracing flow against a real `assay serve` (SQLite and PostgreSQL): a monitored
OpenAI client (the loopback fake) and a traced retrieval function give traces with contexts;
`Trace` lists, filters, edits (a concurrent edit is refused) and adds to a dataset; a
`ReviewQueue` selects exactly the matching traces, its judge scores them, people label them and
the labels export."""

from __future__ import annotations

import time
import uuid

import openai
import pytest

from assay.platform import (
    Conflict,
    Criteria,
    Dataset,
    ReviewQueue,
    Trace,
    ValidationFailed,
    flush,
    monitor,
    trace_function_call,
)
from assay.platform.sdk.export import export_stats
from tests.models.fake_openai import dynamic, ok

DOCS = {
    "France": ["Paris is the capital of France.", "France is in Western Europe."],
    "Japan": ["Tokyo is the capital of Japan."],
}


def app_behaviour():
    """The application's model answers from its prompt; the judge's model gives 4 out of 5."""

    def choose(request):
        if request.body.get("model") == "app-model":
            for country, docs in DOCS.items():
                if country in request.last_user_text:
                    return ok(docs[0].split(" is ")[0] + ".", usage=(20, 2))
            return ok("I do not know.", usage=(20, 4))
        return ok('{"feedback": "relevant", "reason": "relevant", "score": 4}')

    return dynamic(choose)


def make_app(fake, metadata):
    client = monitor(
        openai.OpenAI(api_key="sk-test", base_url=fake.url, max_retries=0), metadata=metadata
    )

    @trace_function_call
    def retrieve(question: str) -> list[str]:
        return [d for country, docs in DOCS.items() if country in question for d in docs]

    @trace_function_call
    def answer(question: str) -> str:
        docs = retrieve(question)
        prompt = "\n".join(docs) + f"\n\nQuestion: {question}"
        reply = client.chat.completions.create(
            model="app-model", messages=[{"role": "user", "content": prompt}]
        )
        return reply.choices[0].message.content

    return answer


def logged(n: int, condition: str | None = None) -> list[Trace]:
    assert flush(10)
    traces = Trace.list(condition=condition)
    assert len(traces) == n, [t.input for t in traces]
    return traces


def test_monitored_app_gives_traces_with_contexts(sdk, fake):
    fake.default = app_behaviour()
    rejected = export_stats()["rejected"]
    answer = make_app(fake, {"tier": "gold"})
    assert answer("What is the capital of France?") == "Paris."
    [trace] = logged(1)
    assert trace.input == "What is the capital of France?" and trace.output == "Paris."
    assert trace.contexts == DOCS["France"]
    assert trace.metadata == {"tier": "gold"} and trace.model == "app-model"
    assert trace.usage == {"input_tokens": 20, "output_tokens": 2}
    assert trace.version == 1 and trace.edited is False
    assert sorted(s["kind"] for s in trace.spans) == ["function", "llm", "retrieval"]
    assert trace.raw_input["model"] == "app-model"
    again = Trace.download(id=trace.id)
    assert again.contexts == trace.contexts and again.spans == trace.spans
    assert export_stats()["rejected"] == rejected


def test_trace_edit_and_conflict(sdk, fake):
    fake.default = app_behaviour()
    make_app(fake, {})("What is the capital of Japan?")
    [trace] = logged(1)
    mine, theirs = Trace.download(id=trace.id), Trace.download(id=trace.id)
    mine.output = "Tokyo (checked)."
    mine.contexts.append("Japan is an island country.")  # in place: counted too
    assert mine.edit_mode is True
    mine.save()
    assert mine.version == 2 and mine.edited is True and mine.edit_mode is False
    theirs.output = "Kyoto."
    with pytest.raises(Conflict, match="changed by someone else after version 1"):
        theirs.save()
    stored = Trace.download(id=trace.id)
    assert stored.output == "Tokyo (checked)." and stored.contexts[-1].startswith("Japan is")
    [revision] = stored.revisions()
    assert revision["version"] == 1 and revision["snapshot"]["output"] == "Tokyo."
    with pytest.raises(ValidationFailed, match="raw_output of a logged trace cannot be edited"):
        stored.raw_output = {}


def test_a_trace_made_by_its_id_then_changed_is_an_edit_of_it(sdk, fake):
    fake.default = app_behaviour()
    make_app(fake, {})("What is the capital of Japan?")
    [trace] = logged(1)
    by_id = Trace(id=trace.id)
    by_id.output = "Tokyo (checked)."
    by_id.save()  # was: posted as a new trace, ignored, and the old one reloaded
    stored = Trace.download(id=trace.id)
    assert stored.output == "Tokyo (checked)." and stored.version == 2 and stored.edited is True
    assert stored.input == trace.input  # what was not set is not touched
    assert by_id.version == 2 and by_id.input == trace.input
    with pytest.raises(ValidationFailed, match=r"raw_output of logged trace .* cannot be edited"):
        Trace(id=trace.id, raw_output={"changed": True}).save()
    assert Trace.download(id=trace.id).version == 2  # nothing was sent
    new_id = str(uuid.uuid4())
    Trace(id=new_id, input="q", output="a").save()  # an id nobody logged: a new trace
    assert Trace.download(id=new_id).output == "a"


def test_filter_and_add_to_dataset(sdk, fake):
    fake.default = app_behaviour()
    make_app(fake, {"tier": "gold"})("What is the capital of France?")
    make_app(fake, {"tier": "free"})("What is the capital of Japan?")
    make_app(fake, {"tier": "free"})("What is the capital of Mars?")
    logged(3)
    free = Trace.list(condition="metadata.tier = 'free' AND output NOT LIKE '%know%'")
    assert [t.output for t in free] == ["Tokyo."]
    with pytest.raises(ValidationFailed):
        Trace.list(condition="input = 'a' OR 1=1; DROP TABLE traces")
    assert len(Trace.list()) == 3  # nothing dropped
    Trace.to_dataset(free, "From production")
    dataset = Dataset.download(name="From production")
    [example] = dataset.examples
    assert example.question == "What is the capital of Japan?"
    assert example.ground_truth_answer == "Tokyo." and example.contexts == DOCS["Japan"]


def test_review_queue_selects_judges_labels_and_exports(sdk, fake):
    fake.default = app_behaviour()
    Criteria(
        name="Relevance",
        phase="generation",
        output_type="5-point",
        criteria_type="llm_judge",
        header="How relevant is the response to the question?",
        likert_score_1="Not relevant at all",
        likert_score_2="Slightly relevant",
        likert_score_3="Moderately relevant",
        likert_score_4="Very relevant",
        likert_score_5="Completely relevant",
    ).save()
    make_app(fake, {"tier": "gold"})("What is the capital of France?")
    make_app(fake, {"tier": "free"})("What is the capital of Japan?")
    logged(2)
    queue = ReviewQueue(
        "gold answers",
        condition="metadata.tier = 'gold'",
        criteria=["Relevance"],
        judge_model=fake.model_string("judge"),
    )
    queue.save()
    assert queue.id is not None and queue.version == 1
    assert [t.output for t in queue] == ["Paris."]  # stored traces entered on creation
    make_app(fake, {"tier": "gold"})("Is Tokyo the capital of Japan?")
    make_app(fake, {"tier": "free"})("Anything about France?")
    logged(4)
    assert len(queue.traces) == 1  # fetched once, lazily
    queue = ReviewQueue.download(name="gold answers")
    assert sorted(t.output for t in queue) == ["Paris.", "Tokyo."]

    # the queue's judge scores each entering trace (the worker, through the library's judges)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        scored = [t for t in Trace.list(condition="score.Relevance >= 1")]
        if len(scored) == 2:
            break
        time.sleep(0.2)
    assert sorted(t.output for t in scored) == ["Paris.", "Tokyo."]

    first = next(t for t in queue if t.output == "Paris.")
    stored = queue.label(first, "Relevance", 5, comment="spot on")
    assert stored["author"].startswith("key:") and stored["item_done"] is True
    [row] = queue.export()
    assert row["trace_id"] == first.id and row["label"] == 5 and row["criterion"] == "Relevance"
    assert row["label_author"] == stored["author"] and row["contexts"] == DOCS["France"]
    assert row["score"] is not None and row["score_source"].startswith("judge:")
    assert [t.id for t in queue.traces_with("done")] == [first.id]

    # edit mode: a second reader's change after ours is refused
    other = ReviewQueue.download(name="gold answers")
    queue.condition = "metadata.tier = 'gold' AND latency_ms >= 0"
    assert queue.edit_mode is True
    queue.save()
    assert queue.version == 2 and queue.edit_mode is False
    other.condition = "metadata.tier = 'free'"
    with pytest.raises(Conflict, match="changed by someone else"):
        other.save()
    assert ReviewQueue.download(name="gold answers").condition.endswith("latency_ms >= 0")


def test_review_queue_save_updates_the_queue_of_that_name(sdk):
    ReviewQueue("q", condition="model = 'a'").save()
    again = ReviewQueue("q", condition="model = 'b'").save()
    assert again.version == 2 and ReviewQueue.download(name="q").condition == "model = 'b'"
    with pytest.raises(ValidationFailed):
        ReviewQueue("bad", condition="input = = 'x'").save()
    with pytest.raises(ValidationFailed, match="name must be a non-empty string"):
        ReviewQueue("")


def test_trace_logged_directly_and_labelled(sdk):
    trace = Trace(
        input="What is 2 + 2?", output="4", contexts=["Arithmetic."], metadata={"src": "manual"}
    ).save()
    assert trace.version == 1 and trace.created_at is not None
    label = trace.label("correct", True, comment="checked")
    assert label["value"] is True and label["author"].startswith("key:")
    stored = Trace.download(id=trace.id)
    assert stored.labels["correct"]["value"] is True
    assert [t.id for t in Trace.list(condition="label.correct = true")] == [trace.id]


def test_awkward_values_are_stored_not_refused(sdk):
    @trace_function_call(kind="function")
    def odd(x: float) -> dict:
        return {
            "nan": float("nan"),
            "nul": "a\x00b",
            "surrogate": "\ud800",
            "many": list(range(5000)),
        }

    rejected = export_stats()["rejected"]
    odd(float("inf"))
    [trace] = logged(1)
    assert trace.input == "inf"
    assert trace.output["nan"] == "nan" and trace.output["nul"] == "a\ufffdb"
    assert len(trace.output["many"]) == 1000
    assert export_stats()["rejected"] == rejected
