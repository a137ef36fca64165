"""`metric.align` through the real metric and model path, with scripted judges and embedders."""

from __future__ import annotations

import json
import re

import pytest

from assay.alignment import Aligner, calibrate_threshold, from_rows, load_aligned_metric
from assay.alignment.calibration import rate
from assay.errors import UsageError
from assay.metrics.aligned import AlignedExample, nearest_examples
from assay.metrics.custom.llm_metrics import DiscreteMetric
from assay.metrics.general.aspect_critic import AspectCritic
from assay.metrics.general.rubrics import RubricsScore
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, ScriptedProvider
from assay.prompts.prompt import load_prompt
from tests.alignment.scripted import faithfulness_judge, keyword_embedder, last_items

CITIES = ["paris", "rome", "berlin", "madrid", "lisbon", "vienna"]


def city_rows(n=24, *, group_size=2):
    """Rows about cities; 'indeed' rows are faithful (label 1), 'maybe' rows are not."""
    rows = []
    for i in range(n):
        city = CITIES[i % len(CITIES)]
        good = (i // len(CITIES)) % 3 != 0  # each city has rows of both labels
        rows.append(
            {
                "id": f"r{i}",
                "response": f"The meeting is in {city} {'indeed' if good else 'maybe'} {i}.",
                "retrieved_contexts": [f"The meeting is in {city}."],
                "label": int(good),
                "group": f"g{i // group_size}",
            }
        )
    return from_rows(rows, group_column="group")


def p_by_marker(request):
    # The unaligned cut (0.5) calls every row unfaithful; a cut near 0.3 separates them.
    return 0.4 if "indeed" in last_items(request) else 0.2


def shown_examples(request):
    """(items, verdict) of the worked examples after the prompt's built-in one."""
    messages = request.messages[3:-1]
    pairs = []
    for user, assistant in zip(messages[::2], messages[1::2], strict=True):
        items = re.findall(r"<items>\n(.*?)\n</items>", str(user.content), re.S)[0]
        pairs.append((items.removeprefix("1. "), str(assistant.content)))
    return pairs


def test_nearest_examples_balanced_thresholded_and_ragas_fallback():
    pool = [
        AlignedExample(id="a", label=1, prompt_id="p", input={}, output="", vector=[1.0, 0.0]),
        AlignedExample(id="b", label=1, prompt_id="p", input={}, output="", vector=[0.9, 0.1]),
        AlignedExample(id="c", label=0, prompt_id="p", input={}, output="", vector=[0.2, 1.0]),
        AlignedExample(id="d", label=0, prompt_id="p", input={}, output="", vector=[0.0, 1.0]),
    ]
    query = [1.0, 0.05]
    # top-2 by similarity: both positives; balanced: the nearest of each label, closest last
    assert [e.id for e in nearest_examples(pool, query, 2, balance=False)] == ["b", "a"]
    assert [e.id for e in nearest_examples(pool, query, 2, balance=True)] == ["c", "a"]
    assert [e.id for e in nearest_examples(pool, query, 3, balance=True)] == ["c", "b", "a"]
    # a floor no example reaches: balanced ignores it, Ragas' fallback takes the last k of the pool
    far = [-1.0, 0.0]
    assert {e.id for e in nearest_examples(pool, far, 2, similarity_threshold=0.99)} == {"b", "d"}
    assert [
        e.id
        for e in nearest_examples(
            pool, far, 2, balance=False, similarity_threshold=0.99, fallback="recent"
        )
    ] == ["c", "d"]
    assert [
        e.id for e in nearest_examples(pool, query, 4, balance=False, similarity_threshold=0.9)
    ] == ["b", "a"]


def test_calibrate_threshold_picks_the_best_cut_nearest_the_prior():
    # cuts 0.2 and 0.475 both give balanced accuracy 0.75; 0.475 is nearer 0.5
    threshold, value = calibrate_threshold([0.1, 0.3, 0.35, 0.6], [0, 1, 0, 1])
    assert threshold == pytest.approx(0.475) and value == pytest.approx(0.75)
    with pytest.raises(UsageError, match="both labels"):
        calibrate_threshold([0.1, 0.2], [1, 1])


def test_align_shows_balanced_similar_examples_and_calibrates():
    rows = city_rows()
    llm, provider = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=llm).align(
        rows, embeddings, max_similar_examples=2, show_progress=False
    )
    state = metric.alignment
    assert len(state.examples) == 24 and state.k == 2
    assert {e.output for e in state.examples} == {"1. yes", "1. no"}
    assert state.threshold == pytest.approx(0.3)
    assert state.provenance["calibration"]["train_value"] == 1.0
    assert state.provenance["judge_calls"] == 24
    provider.requests.clear()
    result = metric.score(
        response="The meeting is in paris indeed 99.",
        retrieved_contexts=["The meeting is in paris."],
    )
    assert result.value == pytest.approx(0.4)
    assert result.details["alignment"] == {"threshold": pytest.approx(0.3), "passed": True}
    shown = shown_examples(provider.requests[0])
    assert len(shown) == 2
    assert sorted(verdict for _, verdict in shown) == ["1. no", "1. yes"]  # one of each label
    assert all("paris" in items for items, _ in shown)  # the most similar rows
    # the unaligned metric is unchanged: no examples, no alignment note
    plain = Faithfulness(llm=llm).score(
        response="The meeting is in paris indeed.", retrieved_contexts=["x"]
    )
    assert plain.details.get("alignment") is None


def test_calibration_never_shows_a_row_its_own_groups_examples():
    rows = city_rows(group_size=3)
    group_of = {e.fields["response"]: e.group for e in rows}
    llm, provider = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    Faithfulness(llm=llm).align(rows, embeddings, max_similar_examples=4, show_progress=False)
    assert len(provider.requests) == len(rows)
    for request in provider.requests:
        own = group_of[last_items(request).removeprefix("1. ")]
        shown = shown_examples(request)
        assert len(shown) == 4
        assert all(group_of[items] != own for items, _ in shown)


def test_threshold_is_the_best_on_the_training_rows():
    rows = city_rows(18, group_size=1)
    spread = {f"{i}.": 0.05 * i for i in range(18)}  # a score by row number, not by label

    def p(request):
        number = last_items(request).split()[-1]
        return 0.9 if number == "4." else spread[number]

    llm, _ = faithfulness_judge(p)
    embeddings, _ = keyword_embedder()
    state = Faithfulness(llm=llm).align(rows, embeddings, show_progress=False).alignment
    scores = [0.9 if i == 4 else 0.05 * i for i in range(18)]
    labels = [e.label for e in rows]
    best = max(rate([s >= t for s in scores], labels, "balanced_accuracy") for t in [*scores, 2.0])
    chosen = rate([s >= state.threshold for s in scores], labels, "balanced_accuracy")
    assert chosen == pytest.approx(best)
    assert state.provenance["calibration"]["train_value"] == pytest.approx(best)


def test_align_and_validate_fits_on_train_only_and_reports_before_and_after():
    rows = city_rows(30)
    train, test = rows.train_test_split(test_size=0.3, seed=2)
    test_texts = {e.fields["response"] for e in test}
    llm, provider = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=llm)
    report = metric.align_and_validate(
        train,
        test,
        embedding_model=embeddings,
        show_progress=False,
        report_options={"n_resamples": 100},
    )
    assert all(e.id not in {t.id for t in test} for e in metric.alignment.examples)
    for request in provider.requests:
        assert not any(items in test_texts for items, _ in shown_examples(request))
    # calibration scored train once; validation scored test twice (before and after)
    assert len(provider.requests) == len(train) + 2 * len(test)
    assert report.n_rows == len(test) and report.n_paired == len(test)
    assert report.before["balanced_accuracy"].value == pytest.approx(0.5)  # 0.5 calls all "no"
    assert report.value("balanced_accuracy") == pytest.approx(1.0)
    assert report.differences["balanced_accuracy"].value == pytest.approx(0.5)


def test_align_and_validate_splits_when_no_test_is_given_and_refuses_shared_groups():
    rows = city_rows(24)
    llm, _ = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    report = Faithfulness(llm=llm).align_and_validate(
        rows,
        embedding_model=embeddings,
        test_size=0.25,
        random_state=1,
        show_progress=False,
        report_options={"n_resamples": 50},
    )
    assert report.n_rows == 6
    with pytest.raises(UsageError, match="share"):
        Faithfulness(llm=llm).align_and_validate(
            rows, rows[:4], embedding_model=embeddings, show_progress=False
        )


def test_failed_rows_are_counted_not_hidden():
    rows = city_rows(12, group_size=1)

    def answer(request):
        from tests.alignment.scripted import verdict

        if " 5." in last_items(request):
            return "I will not answer that."
        return verdict(p_by_marker(request))

    provider = ScriptedProvider([answer], repeat_last=True)
    embeddings, _ = keyword_embedder()
    state = Faithfulness(llm=LLM(provider)).align(rows, embeddings, show_progress=False).alignment
    assert state.provenance["calibration_failures"] == 1
    assert state.provenance["calibration_rows"] == 11
    assert any("OutputParseError" in note for note in state.provenance["notes"])


def test_save_and_load_round_trip_and_prompt_checks(tmp_path):
    rows = city_rows(12)
    llm, provider = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=llm, scoring="binary").align(rows, embeddings, show_progress=False)
    path = metric.save_alignment(tmp_path / "aligned.json")
    saved = json.loads(path.read_text())
    assert (
        saved["metric"]["class"] == "Faithfulness"
        and saved["metric"]["params"]["scoring"] == "binary"
    )
    assert saved["alignment"]["prompts"]["supported"] == {
        "version": load_prompt("supported").version,
        "hash": load_prompt("supported").hash,
    }
    loaded = load_aligned_metric(path, llm=llm, embedding_model=embeddings)
    assert isinstance(loaded, Faithfulness) and loaded.scoring == "binary"
    assert loaded.alignment.threshold == metric.alignment.threshold
    assert [e.to_json() for e in loaded.alignment.examples] == [
        e.to_json() for e in metric.alignment.examples
    ]
    provider.requests.clear()
    sample = {
        "response": "The meeting is in rome indeed 77.",
        "retrieved_contexts": ["The meeting is in rome."],
    }
    metric.score(**sample)
    loaded.score(**sample)
    first, second = provider.requests
    assert [m.content for m in first.messages] == [m.content for m in second.messages]

    changed = Faithfulness(llm=llm)
    changed.set_prompt(load_prompt("supported").model_copy(update={"instruction": "Say yes."}))
    with pytest.raises(UsageError, match=r"prompt 'supported' version 1 \(hash"):
        changed.load_alignment(path)
    with pytest.raises(UsageError, match="fitted for a Faithfulness"):
        AspectCritic(name="x", definition="d").load_alignment(path)
    (tmp_path / "bad.json").write_text('{"alignment": {"format": "other"}}')
    with pytest.raises(UsageError, match="not an aligned-metric state"):
        Faithfulness().load_alignment(tmp_path / "bad.json")


def test_similar_selection_without_embeddings_at_load_is_a_clear_error(tmp_path):
    llm, _ = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=llm).align(
        city_rows(6), embeddings, calibrate=False, show_progress=False
    )
    path = metric.save_alignment(tmp_path / "a.json")
    loaded = Faithfulness(llm=llm).load_alignment(path)
    with pytest.raises(UsageError, match="needs an embedding model"):
        loaded.score(response="The meeting is in rome.", retrieved_contexts=["x"])


def discrete_judge():
    def answer(request):
        text = str(request.messages[-1].content)
        value = "pass" if "correct" in text.split("<response>")[-1] else "fail"
        return json.dumps({"reason": "scripted", "value": value})

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


def test_template_metric_aligns_with_fixed_examples_and_saves_with_the_metric(tmp_path):
    rows = from_rows(
        [
            {
                "id": f"t{i}",
                "response": f"answer {i} is {'correct' if i % 2 else 'wrong'}",
                "label": "pass" if i % 2 else "fail",
            }
            for i in range(8)
        ]
    )
    llm, provider = discrete_judge()
    metric = DiscreteMetric(
        name="check", prompt="Is this right? {response}", allowed_values=["pass", "fail"], llm=llm
    )
    metric.align(rows, max_similar_examples=2, selection="fixed", show_progress=False)
    state = metric.alignment
    assert state.threshold is None and state.provenance["label_kind"] == "nominal"
    assert len(state.fixed_ids) == 2
    assert sorted(e.label for e in state.examples if e.id in state.fixed_ids) == ["fail", "pass"]
    path = metric.save(tmp_path / "check.json")
    assert json.loads(path.read_text())["alignment"]["fixed_ids"] == state.fixed_ids
    loaded = DiscreteMetric.load(path, llm=llm)
    assert loaded.alignment.fixed_ids == state.fixed_ids
    provider.requests.clear()
    result = loaded.score(response="this one is correct")
    assert result.value == "pass"
    request = provider.requests[0]
    assert len(request.messages) == 1 + 2 * 2 + 1  # system, two examples, the row
    assert json.loads(request.messages[2].content)["value"] in ("pass", "fail")
    report = loaded.validate_alignment(test=rows)
    assert report.kind == "nominal" and report.value("agreement") == 1.0


def test_template_alignment_refuses_a_changed_template(tmp_path):
    rows = from_rows(
        [{"response": "a correct", "label": "pass"}, {"response": "b wrong", "label": "fail"}]
    )
    llm, _ = discrete_judge()
    metric = DiscreteMetric(name="check", prompt="Is this right? {response}", llm=llm)
    metric.align(rows, selection="fixed", show_progress=False)
    path = metric.save(tmp_path / "check.json")
    data = json.loads(path.read_text())
    data["prompt"] = "Is this fine? {response}"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="prompt 'template'"):
        DiscreteMetric.load(path, llm=llm)


def test_aspect_critic_and_rubric_examples_take_their_prompts_shape():
    rows = city_rows(12)
    embeddings, _ = keyword_embedder()
    critic = AspectCritic(name="grounded", definition="Is it grounded?")
    state = Aligner().fit(critic, rows, embeddings=embeddings, calibrate=False, show_progress=False)
    assert [e.output for e in state.examples] == ["no"] * 6 + ["yes"] * 6
    example = state.examples[6]
    assert (
        example.prompt_id == "aspect_critic"
        and example.input["response"] == rows[6].fields["response"]
    )
    assert example.input["criterion"] == "Is it grounded?"
    assert set(example.input) == set(load_prompt("aspect_critic").inputs)
    graded = from_rows(
        [{"response": f"r{i}", "label": 1 + i % 5, "reason": "fits"} for i in range(5)]
    )
    rubric = RubricsScore()
    state = Aligner().fit(
        rubric,
        graded,
        embeddings=embeddings,
        calibrate=False,
        selection="fixed",
        show_progress=False,
    )
    assert state.provenance["label_kind"] == "ordinal"
    assert state.examples[2].output == {"feedback": "fits", "score": 3}


def test_labels_that_do_not_fit_the_metric_are_refused():
    embeddings, _ = keyword_embedder()
    llm, _ = discrete_judge()
    bad = from_rows([{"response": "x", "label": "maybe"}, {"response": "y", "label": "pass"}])
    with pytest.raises(UsageError, match="'maybe' is not one of"):
        DiscreteMetric(name="c", prompt="{response}", llm=llm).align(bad, show_progress=False)
    with pytest.raises(UsageError, match="lacks retrieved_contexts"):
        Faithfulness().align(
            from_rows([{"response": "x", "label": 1}]), embeddings, show_progress=False
        )


def test_a_given_aligner_is_used_instead_of_the_default():
    class Recording:
        def __init__(self):
            self.calls = []

        def fit(self, metric, train, **options):
            self.calls.append(options)
            return Aligner().fit(metric, train, **options)

    recording = Recording()
    llm, _ = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    Faithfulness(llm=llm).align(
        city_rows(6), embeddings, 1, aligner=recording, calibrate=False, show_progress=False
    )
    assert recording.calls and recording.calls[0]["k"] == 1


def test_an_aligned_metric_says_so_in_its_spec():
    llm, _ = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    plain = Faithfulness(llm=llm)
    assert "alignment" not in plain.spec()
    aligned = Faithfulness(llm=llm).align(city_rows(12), embeddings, show_progress=False)
    note = aligned.spec()["alignment"]
    assert note["examples"] == 12 and note["threshold"] == aligned.alignment.threshold
    other = Faithfulness(llm=llm).align(city_rows(12), embeddings, 1, show_progress=False)
    assert other.spec()["alignment"]["hash"] != note["hash"]
    assert "alignment" in aligned.with_models(llm=llm).spec()  # copies keep it


def test_context_recall_examples_check_the_reference():
    from assay.metrics.rag.context_recall import LLMContextRecall

    rows = from_rows(
        [
            {"reference": f"Ref {i}.", "retrieved_contexts": [f"ctx {i}"], "label": i % 2}
            for i in range(4)
        ]
    )
    state = Aligner().fit(
        LLMContextRecall(), rows, calibrate=False, selection="fixed", show_progress=False
    )
    assert [(e.input["items"], e.output) for e in state.examples] == [
        ("1. Ref 0.", "1. no"),
        ("1. Ref 1.", "1. yes"),
        ("1. Ref 2.", "1. no"),
        ("1. Ref 3.", "1. yes"),
    ]


def test_evaluate_runs_an_aligned_metric():
    from assay import EvaluationDataset, evaluate

    llm, _ = faithfulness_judge(p_by_marker)
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=llm).align(city_rows(12), embeddings, show_progress=False)
    data = EvaluationDataset.from_list(
        [
            {
                "response": "The meeting is in rome indeed 5.",
                "retrieved_contexts": ["The meeting is in rome."],
            }
        ]
    )
    result = evaluate(data, [metric], show_progress=False)
    outcome = result.outcome(0, "faithfulness")
    assert outcome.value == pytest.approx(0.4)
    assert outcome.details["alignment"] == {"threshold": pytest.approx(0.3), "passed": True}


def test_conversations_make_examples_for_a_general_judge():
    rows = from_rows(
        [
            {
                "user_input": [
                    {"type": "human", "content": f"question {i}"},
                    {"type": "ai", "content": f"answer {i}"},
                ],
                "label": i % 2,
            }
            for i in range(4)
        ]
    )
    critic = AspectCritic(name="helpful", definition="Was the assistant helpful?")
    state = Aligner().fit(critic, rows, calibrate=False, selection="fixed", show_progress=False)
    assert "question 1" in state.examples[1].input["response"]
    assert state.examples[1].output == "yes"


def test_yes_no_labels_on_a_scale_judge_teach_the_ends_of_the_scale():
    from assay.metrics.custom.llm_metrics import NumericMetric

    rows = from_rows([{"response": f"r{i}", "label": i % 2, "reason": "why"} for i in range(4)])
    state = Aligner().fit(
        RubricsScore(), rows, calibrate=False, selection="fixed", show_progress=False
    )
    assert [e.output["score"] for e in state.examples] == [1, 5, 1, 5]  # no -> worst, yes -> best
    assert [e.label for e in state.examples] == [0, 1, 0, 1]
    numeric = NumericMetric(name="n", prompt="Rate {response}", allowed_values=(0.0, 10.0))
    state = Aligner().fit(numeric, rows, calibrate=False, selection="fixed", show_progress=False)
    assert [e.output["value"] for e in state.examples] == [0.0, 10.0, 0.0, 10.0]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"max_similar_examples": -1}, "whole number >= 0"),
        ({"selection": "random"}, "selection must be"),
        ({"objective": "recall"}, "objective must be"),
        ({"similarity_threshold": 1.5}, r"\[-1, 1\]"),
        ({"fallback": "oldest"}, "fallback must be"),
    ],
)
def test_bad_align_options_are_refused_before_any_call(option, message):
    llm, provider = faithfulness_judge(p_by_marker)
    embeddings, embedder = keyword_embedder()
    with pytest.raises(UsageError, match=message):
        Faithfulness(llm=llm).align(city_rows(6), embeddings, show_progress=False, **option)
    assert provider.requests == [] and embedder.embedded == []


def test_a_yes_no_judge_is_calibrated_on_its_probability_of_yes():
    from tests.alignment.scripted import verdict

    rows = city_rows(12, group_size=1)

    def answer(request):
        return verdict(
            0.45 if "indeed" in str(request.messages[-1].content).split("<response>")[-1] else 0.2
        )

    provider = ScriptedProvider([answer], repeat_last=True)
    critic = AspectCritic(name="grounded", definition="Is it grounded?", llm=LLM(provider))
    assert critic.score(response="x indeed", user_input="q").value == 0  # every vote says no
    embeddings, _ = keyword_embedder()
    train, test = rows.train_test_split(test_size=0.34, seed=0)
    report = critic.align_and_validate(
        train,
        test,
        embedding_model=embeddings,
        show_progress=False,
        report_options={"n_resamples": 50},
    )
    assert critic.alignment.threshold == pytest.approx(0.325)
    assert report.before["balanced_accuracy"].value == pytest.approx(0.5)
    assert report.value("balanced_accuracy") == pytest.approx(1.0)
    result = critic.score(response="The meeting is in rome indeed 1.")
    assert result.value == 0 and result.details["alignment"] == {
        "threshold": pytest.approx(0.325),
        "passed": True,
        "score": pytest.approx(0.45),
    }
