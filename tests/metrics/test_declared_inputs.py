"""A metric's inputs come from its `_ascore` signature; `Literal` parameters are checked once, in
the base class, for every metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from assay import SingleTurnSample
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.rag.faithfulness import Faithfulness
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class Overlap(Metric):
    name: str = "overlap"
    case: Literal["exact", "folded"] = "exact"
    weight: Literal[1, 2] | None = None
    strict: Literal[True] | None = None

    async def _ascore(
        self, *, response: str, reference: str, user_input: str | None = None
    ) -> MetricResult:
        if self.case == "folded":
            response, reference = response.lower(), reference.lower()
        shared = set(response.split()) & set(reference.split())
        return MetricResult(len(shared) / max(len(set(reference.split())), 1))


def test_the_signature_says_which_fields_are_required_and_which_optional():
    assert Overlap.required_fields == ("response", "reference")
    assert Overlap.optional_fields == ("user_input",)
    sample = SingleTurnSample(
        response="a b", reference="b c", user_input="q", retrieved_contexts=[]
    )

    assert Overlap().score(response="A b", reference="b c").value == 0.5
    assert Overlap().missing_fields(SingleTurnSample(response="a")) == ["reference"]
    with pytest.raises(UsageError, match="needs reference"):
        Overlap().score(response="a")
    with pytest.raises(UsageError, match="unexpected field"):
        Overlap().score(response="a", reference="b", retrieved_contexts=["x"])
    assert Overlap(case="folded").score(response="B", reference="b").value == 1.0
    assert sample.response == "a b"


def test_literal_parameters_are_refused_outside_their_values_naming_them():
    with pytest.raises(
        UsageError, match=r"Overlap: case must be one of 'exact', 'folded', got 'Exact'"
    ):
        Overlap(case="Exact")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="weight must be one of 1, 2, None, got 3"):
        Overlap(weight=3)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="strict"):
        Overlap(strict=1)  # type: ignore[arg-type]  # 1 == True, but is no bool
    with pytest.raises(UsageError, match="weight"):
        Overlap(weight=True)  # type: ignore[arg-type]  # True == 1, but is a bool
    assert Overlap(weight=None, strict=True).weight is None
    with pytest.raises(ValueError, match="statements must be one of 'claims', 'sentences'"):
        Faithfulness(statements="claim")  # type: ignore[arg-type]  # a library metric, same check


def test_spelled_out_fields_must_agree_with_the_signature():
    with pytest.raises(TypeError, match="declares retrieved_contexts but its _ascore takes no"):

        @dataclass(kw_only=True)
        class Wrong(Metric):
            name: str = "wrong"
            required_fields = ("response", "retrieved_contexts")

            async def _ascore(self, *, response: str) -> MetricResult:
                return MetricResult(1.0)

    with pytest.raises(TypeError, match="makes reference optional"):

        @dataclass(kw_only=True)
        class AlsoWrong(Metric):
            name: str = "also_wrong"
            required_fields = ("response",)
            optional_fields = ("reference",)

            async def _ascore(self, *, response: str, reference: str) -> MetricResult:
                return MetricResult(1.0)


def test_an_instance_can_declare_its_own_fields():
    @dataclass(kw_only=True)
    class Template(Metric):
        name: str = "template"
        fields: tuple[str, ...] = ("response",)

        def __post_init__(self) -> None:
            super().__post_init__()
            self.declare_fields(self.fields)

        async def _ascore(self, **fields: object) -> MetricResult:
            return MetricResult(float(len(fields)))

    two = Template(fields=("response", "reference"))
    assert two.fields_for("single_turn") == (("response", "reference"), ())
    assert Template().fields_for("single_turn") == (("response",), ())
    assert two.score(response="a", reference="b").value == 2.0
