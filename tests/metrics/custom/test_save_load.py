"""Custom judges save to and load from JSON: plain, gzipped, into a directory, without a suffix."""

from __future__ import annotations

import gzip
import json

import pytest

from assay.errors import UsageError
from assay.metrics.custom import DiscreteMetric, NumericMetric, RankingMetric
from tests.metrics.rag.scripted import judge

EXAMPLE = {
    "inputs": {"response": "Rome.", "reference": "Paris"},
    "output": {"value": "fail", "reason": "Wrong city."},
}


def discrete() -> DiscreteMetric:
    return DiscreteMetric(
        name="quality_check",
        allowed_values=["excellent", "good", "poor"],
        prompt="Check the quality of the response: {response} against {reference}. "
        "Return 'excellent', 'good', or 'poor'.",
        examples=[EXAMPLE],
    )


def numeric() -> NumericMetric:
    return NumericMetric(
        name="similarity",
        allowed_values=(0, 5),
        prompt="How similar are {response} and {reference}?",
    )


def ranking() -> RankingMetric:
    return RankingMetric(name="preference", allowed_values=3, prompt="Rank {responses}")


def same(a, b) -> bool:
    return (type(a), a.name, a.prompt, a.allowed_values, a.examples, a.required_fields) == (
        type(b),
        b.name,
        b.prompt,
        b.allowed_values,
        b.examples,
        b.required_fields,
    )


@pytest.mark.parametrize("make", [discrete, numeric, ranking])
def test_round_trip_plain_json(tmp_path, make):
    metric = make()
    path = metric.save(tmp_path / "metric.json")
    assert path == tmp_path / "metric.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == "1.0"
    assert data["metric_type"] == type(metric).__name__
    assert {"name", "prompt", "allowed_values", "examples", "version"} <= set(data)
    loaded = type(metric).load(path)
    assert same(loaded, metric)


def test_numeric_bounds_come_back_as_a_tuple(tmp_path):
    loaded = NumericMetric.load(numeric().save(tmp_path / "n.json"))
    assert loaded.allowed_values == (0, 5) and isinstance(loaded.allowed_values, tuple)


def test_gzip(tmp_path):
    path = discrete().save(tmp_path / "metric.json.gz")
    assert path.suffix == ".gz"
    assert json.loads(gzip.decompress(path.read_bytes()))["name"] == "quality_check"
    assert same(DiscreteMetric.load(path), discrete())


def test_directory_path_without_suffix_and_default(tmp_path, monkeypatch):
    folder = tmp_path / "metrics"
    folder.mkdir()
    assert discrete().save(folder) == folder / "quality_check.json"
    assert discrete().save(tmp_path / "saved") == tmp_path / "saved.json"
    assert (tmp_path / "saved.json").exists()
    monkeypatch.chdir(tmp_path)
    path = numeric().save()
    assert path.name == "similarity.json" and (tmp_path / "similarity.json").exists()
    assert same(NumericMetric.load(tmp_path / "similarity.json"), numeric())


def test_loaded_metric_scores_with_an_llm(tmp_path):
    path = discrete().save(tmp_path / "m.json")
    llm, provider = judge(json.dumps({"reason": "ok", "value": "good"}))
    loaded = DiscreteMetric.load(path, llm=llm)
    assert loaded.score(response="Paris", reference="Paris").value == "good"
    # the saved example is still a worked example turn
    assert [m.role for m in provider.requests[0].messages] == [
        "system",
        "user",
        "assistant",
        "user",
    ]


def test_loading_the_wrong_type_or_a_bad_file_is_an_error(tmp_path):
    path = discrete().save(tmp_path / "d.json")
    with pytest.raises(UsageError, match="DiscreteMetric"):
        NumericMetric.load(path)
    with pytest.raises(UsageError):
        RankingMetric.load(numeric().save(tmp_path / "n.json"))
    with pytest.raises(ValueError):  # Ragas raises ValueError; UsageError is one
        NumericMetric.load(path)
    with pytest.raises(UsageError, match="cannot load"):
        DiscreteMetric.load(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot load"):
        DiscreteMetric.load(tmp_path / "broken.json")
    (tmp_path / "broken.json.gz").write_bytes(b"not gzip")
    with pytest.raises(UsageError, match="cannot load"):
        DiscreteMetric.load(tmp_path / "broken.json.gz")


def test_saving_where_it_cannot_be_written_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot save"):
        discrete().save(tmp_path / "no" / "such" / "dir" / "m.json")
