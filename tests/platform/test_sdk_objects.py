"""The seed's objects against a real server: save, download by name and id, versions, dicts."""

from __future__ import annotations

import pytest

from assay.platform import (
    Cohort,
    Conflict,
    Criteria,
    Dataset,
    Example,
    NotFound,
    Task,
    ValidationFailed,
)

RELEVANCE = dict(
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
)


def examples():
    return [
        Example(
            question="What is the capital of France?",
            ground_truth_context="France is a country in Western Europe. Its capital is Paris.",
            ground_truth_answer="Paris",
        ),
        Example(
            question="Is NYC beautiful?",
            ground_truth_context=[
                "NYC is the biggest city in the east of US.",
                "NYC is on the eastern seaboard.",
            ],
            ground_truth_answer="Yes",
        ),
    ]


def test_dataset_save_download_and_versions(sdk):
    dataset = Dataset(name="General Knowledge QA", examples=examples(), source_type="manual")
    dataset.save()
    assert dataset.id is not None and dataset.version == 1 and dataset.questions_qty == 2
    dataset.save()  # same examples: same version
    assert dataset.version == 1
    dataset.examples.append(
        Example("What is the largest planet?", "Jupiter is the largest planet.", "Jupiter")
    )
    dataset.save()
    assert dataset.version == 2
    by_name = Dataset.download(name="General Knowledge QA")
    assert by_name.id == dataset.id and by_name.version == 2 and len(by_name.examples) == 3
    assert [e.question for e in by_name] == [e.question for e in dataset]
    assert (
        by_name.examples[1].ground_truth_context == examples()[1].ground_truth_context
    )  # a list stays a list
    first = Dataset.download(id=dataset.id, version=1)
    assert first.version == 1 and first.examples == examples()
    # a new object of the same name saves as a new version of the stored dataset
    again = Dataset(name="General Knowledge QA", examples=examples()[:1])
    again.save()
    assert again.id == dataset.id and again.version == 3
    assert Dataset.from_dict(by_name.to_dict()).to_dict() == by_name.to_dict()
    with pytest.raises(NotFound, match="version 9"):
        Dataset.download(id=dataset.id, version=9)


def test_large_dataset_pages_through_examples(sdk):
    many = [Example(f"q{i}", f"c{i}", f"a{i}") for i in range(1203)]
    dataset = Dataset(name="big", examples=many)
    dataset.save()
    back = Dataset.download(name="big")
    assert [e.question for e in back] == [e.question for e in many]


def test_task_and_criteria_round_trip(sdk):
    task = Task(
        name="General QA Task", generator_model="gpt-4", system_prompt="You answer accurately."
    )
    task.save()
    task.system_prompt = "Be concise."
    task.save()
    stored = Task.download(name="General QA Task")
    assert stored.id == task.id and stored.system_prompt == "Be concise."
    assert Task.download(id=task.id).to_dict() == task.to_dict()
    # a new task under a taken name: the same settings are the stored task ...
    same = Task(name="General QA Task", generator_model="gpt-4", system_prompt="Be concise.")
    assert same.save().id == task.id
    # ... other settings are refused, never a silent overwrite (issue #41) ...
    other = Task(name="General QA Task", generator_model="other")
    with pytest.raises(Conflict, match=r"already exists \(id \d+\) with other settings") as info:
        other.save()
    assert info.value.existing_id == task.id
    assert Task.download(name="General QA Task").generator_model == "gpt-4"
    # ... unless asked for
    other.save(overwrite=True)
    assert Task.download(name="General QA Task").generator_model == "other"

    relevance = Criteria(**RELEVANCE)
    relevance.save()
    assert Criteria(**RELEVANCE).save().id == relevance.id  # the same criteria, saved again
    date = Criteria(
        name="Contains Date",
        phase="generation",
        output_type="bool",
        criteria_type="function",
        function_name="string_match",
        match_type="regex_match",
        match_pattern=r"\d{1,2}/\d{1,2}/\d{4}|\d{4}-\d{2}-\d{2}",
        test_string="The event occurred on 12/25/2023",
    )
    date.save()
    assert date.validation_status == "valid"
    back = Criteria.download(name="Relevance")
    assert back.to_dict() == relevance.to_dict() and back.id == relevance.id
    miss = Criteria(
        name="Misses",
        criteria_type="function",
        match_type="starts_with",
        match_pattern="Hello",
        test_string="Goodbye",
    )
    assert miss.validation_status == "invalid"
    miss.save()
    assert Criteria.download(id=miss.id).validation_status == "invalid"
    custom = Criteria(
        name="Reasoning Quality",
        phase="generation",
        output_type="prompt",
        criteria_type="llm_judge",
        description="Evaluate the reasoning",
        prompt="Rate 1-10.",
    )
    custom.save()
    assert Criteria.download(id=custom.id).prompt == "Rate 1-10."


def test_rename_onto_a_taken_name_is_a_conflict(sdk):
    Task(name="one").save()
    two = Task(name="two").save()
    two.name = "one"
    with pytest.raises(Conflict, match="already exists"):
        two.save()


def test_download_errors(sdk):
    with pytest.raises(NotFound, match="no task named 'ghost'"):
        Task.download(name="ghost")
    with pytest.raises(NotFound, match="no criteria with id 2147483647"):
        Criteria.download(id=2_147_483_647)
    with pytest.raises(ValidationFailed, match="exactly one"):
        Task.download()
    with pytest.raises(ValidationFailed, match="exactly one"):
        Task.download(name="a", id=1)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        (dict(output_type="5-point", header="h"), "likert_score_1"),
        (
            dict(
                output_type="5-point",
                header="h",
                likert_score_1="a",
                likert_score_2="b",
                likert_score_3="c",
                likert_score_4="d",
            ),
            "likert_score_5",
        ),
        (dict(criteria_type="function", match_type="regex_match"), "match_pattern"),
        (dict(criteria_type="function", match_type="fuzzy", match_pattern="x"), "match_type"),
        (
            dict(criteria_type="function", match_type="regex_match", match_pattern="(unclosed"),
            "match_pattern",
        ),
        (
            dict(criteria_type="function", match_type="regex_match", match_pattern=r"(a)\1"),
            "match_pattern",
        ),  # RE2: no backrefs
        (dict(output_type="stars", header="h"), "output_type"),
        (dict(output_type="bool", header="h", phase="thinking"), "phase"),
        (dict(criteria_type="magic"), "criteria_type"),
        (dict(output_type="prompt"), "prompt"),
        (dict(output_type="bool"), "header"),
        (
            dict(
                criteria_type="function",
                function_name="levenshtein",
                match_type="contains",
                match_pattern="x",
            ),
            "function_name",
        ),
    ],
)
def test_criteria_are_checked_on_construction(kwargs, field):
    with pytest.raises(ValidationFailed) as caught:
        Criteria(name="C", **kwargs)
    assert caught.value.field == field and field in str(caught.value)
    assert "\n" not in str(caught.value)


def test_server_applies_the_same_criteria_rules(live):
    with live.client(live.key()) as client:
        response = client.post(
            "/criteria",
            json={
                "name": "C",
                "criteria_type": "function",
                "match_type": "regex_match",
                "match_pattern": "(?=lookahead)",
            },
        )
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["field"] == "match_pattern" and "RE2" in error["message"]
        response = client.post(
            "/criteria", json={"name": "C", "output_type": "5-point", "header": "h"}
        )
        assert response.status_code == 422 and response.json()["error"]["field"] == "likert_score_1"
        ok = client.post(
            "/criteria",
            json={
                "name": "C",
                "output_type": "bool",
                "header": "h",
                "validation_status": "invalid",
            },
        )
        assert (
            ok.status_code == 201 and ok.json()["validation_status"] == "valid"
        )  # computed, not taken


def test_constructor_errors_are_clear():
    with pytest.raises(ValidationFailed, match="exactly one of generator_model or rag_pipeline"):
        Cohort(name="both", generator_model="gpt-4", rag_pipeline="rag")
    with pytest.raises(ValidationFailed, match="exactly one"):
        Cohort(name="neither")
    assert Cohort(name="GPT-4", generator_model="gpt-4").to_dict() == {
        "name": "GPT-4",
        "generator_model": "gpt-4",
        "rag_pipeline": None,
        "system_prompt": None,
    }
    with pytest.raises(ValidationFailed, match="question must not be empty"):
        Example(question=" ", ground_truth_context="c", ground_truth_answer="a")
    with pytest.raises(ValidationFailed, match=r"ground_truth_context\[1\] must be a string"):
        Example(question="q", ground_truth_context=["a", 2], ground_truth_answer="a")
    with pytest.raises(ValidationFailed, match=r"examples\[0\] must be an Example"):
        Dataset(name="d", examples=["not an example"])
    with pytest.raises(ValidationFailed, match="name must be a string"):
        Task(name=3)  # type: ignore[arg-type]
    with pytest.raises(ValidationFailed, match="case_sensitive"):
        Criteria(name="x", output_type="bool", header="h", case_sensitive="yes")  # type: ignore[arg-type]


def test_seed_import_style():
    import assay.platform as ragmetrics

    for name in ("login", "Dataset", "Example", "Task", "Criteria", "Cohort", "Experiment"):
        assert hasattr(ragmetrics, name)


@pytest.mark.parametrize(
    ("file_name", "text"),
    [
        ("capitals.csv", 'question,answer,contexts\nCapital of Peru?,Lima,"[""Lima is the capital.""]"\nCapital of Chile?,Santiago,\n'),
        ("capitals.jsonl", '{"question": "Capital of Peru?", "answer": "Lima", "contexts": ["Lima is the capital."]}\n{"question": "Capital of Chile?", "ground_truth_answer": "Santiago"}\n'),
        ("capitals.json", '[{"question": "Capital of Peru?", "answer": "Lima", "contexts": ["Lima is the capital."]}, {"question": "Capital of Chile?", "answer": "Santiago"}]'),
    ],
)  # fmt: skip
def test_a_dataset_uploads_from_a_file(sdk, tmp_path, file_name, text):
    path = tmp_path / file_name
    path.write_text(text, encoding="utf-8")
    dataset = Dataset(name=f"from {file_name}", source_file=str(path))
    dataset.save()
    assert dataset.id is not None and dataset.version == 1 and dataset.questions_qty == 2
    assert dataset.source_type == file_name.rsplit(".", 1)[1] and dataset.source_file == file_name
    stored = Dataset.download(id=dataset.id)
    assert [(e.question, e.ground_truth_answer) for e in stored] == [
        ("Capital of Peru?", "Lima"),
        ("Capital of Chile?", "Santiago"),
    ]
    assert stored.examples[0].ground_truth_context == ["Lima is the capital."]
    Dataset(name=f"from {file_name}", source_file=str(path)).save()  # the same file: no change
    assert Dataset.download(id=dataset.id).version == 1
    path.write_text(text.replace("Lima", "Lima Peru"), encoding="utf-8")
    again = Dataset(name=f"from {file_name}", source_file=str(path)).save()
    assert again.id == dataset.id and again.version == 2  # a changed file: a new version
    assert again.examples[0].ground_truth_answer == "Lima Peru"


def test_a_bad_file_is_refused_by_row_as_the_ui_does(sdk, tmp_path):
    ragged = tmp_path / "bad.csv"
    ragged.write_text("question,answer\nq1,a1\nq2,a2,extra\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="row 3: 3 fields where the header has 2") as info:
        Dataset(name="bad", source_file=str(ragged)).save()
    assert info.value.field == "content" and info.value.status == 422
    with pytest.raises(NotFound):
        Dataset.download(name="bad")  # nothing was saved
    empty_question = tmp_path / "bad.jsonl"
    empty_question.write_text('{"question": "ok"}\n{"question": ""}\n', encoding="utf-8")
    with pytest.raises(ValidationFailed, match="line 2, question"):
        Dataset(name="bad", source_file=str(empty_question)).save()
    with pytest.raises(ValidationFailed, match="source_type must be csv, jsonl or json"):
        Dataset(name="bad", source_file=str(tmp_path / "notes.txt")).save()
    with pytest.raises(ValidationFailed, match="cannot read"):
        Dataset(name="bad", source_file=str(tmp_path / "missing.csv")).save()
