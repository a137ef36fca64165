"""One dataset scored several times: what `assert_scores` re-samples when a gate is inconclusive.

    runs = evaluate_repeated(dataset, [faithfulness], llm=judge, repeats=1)
    assert_scores(runs, {"faithfulness": ">=0.8"}, repeats=3)   # judged again only if needed

Each repeat is an ordinary `evaluate` run under `judging_repeat(j)`: with the plugin's cache
(`assay_judge`, `assay_cache`) repeat `j` has answers of its own, recorded and replayed like the
first. A judge with another cache, or none, is simply asked again (a deterministic judge then
gives the same answers, and the interval does not narrow).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import UsageError
from assay.schema.result import EvaluationResult
from assay.testing.cache import judging_repeat


class Runs:
    """The results of scoring one dataset with the same metrics and judge, once per repeat."""

    def __init__(
        self,
        dataset: Any = None,
        metrics: Sequence[Any] | None = None,
        *,
        results: Sequence[EvaluationResult] = (),
        **evaluate_options: Any,
    ) -> None:
        if dataset is not None:  # read once: a file, frame or generator is then judged again as is
            from assay.engine.plan import coerce_dataset

            dataset = coerce_dataset(dataset, evaluate_options.pop("column_map", None))
        self._dataset = dataset
        self._metrics = list(metrics) if metrics is not None else None
        self._options = {"show_progress": False, **evaluate_options}
        self.results: list[EvaluationResult] = list(results)
        if self.results:
            first = self.results[0]
            for other in self.results[1:]:
                if len(other.outcomes) != len(first.outcomes) or set(other.metric_names) != set(
                    first.metric_names
                ):
                    raise UsageError(
                        "repeated results must score the same rows with the same metrics; got "
                        f"{len(first.outcomes)} rows {first.metric_names} and "
                        f"{len(other.outcomes)} rows {other.metric_names}"
                    )

    @property
    def can_resample(self) -> bool:
        return self._dataset is not None and self._metrics is not None

    @property
    def metric_names(self) -> list[str]:
        return self.results[0].metric_names if self.results else []

    def resample(self, repeats: int) -> None:
        """Score the dataset again until there are `repeats` results."""
        if not self.can_resample:
            raise UsageError("these results were given without their dataset and metrics")
        from assay.engine import evaluate

        while len(self.results) < repeats:
            with judging_repeat(len(self.results)):
                result = evaluate(self._dataset, self._metrics, **self._options)
            assert isinstance(result, EvaluationResult)  # not asked for an Executor
            self.results.append(result)


def evaluate_repeated(
    dataset: Any, metrics: Sequence[Any], *, repeats: int = 1, **evaluate_options: Any
) -> Runs:
    """`evaluate(dataset, metrics, **evaluate_options)` `repeats` times (repeat j under
    `judging_repeat(j)`), kept so that `assert_scores` can ask for more."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise UsageError(f"repeats must be a whole number of 1 or more, got {repeats!r}")
    runs = Runs(dataset, metrics, **evaluate_options)
    runs.resample(repeats)
    return runs


def as_runs(result: Any) -> Runs:
    """`Runs` as they are; an `EvaluationResult` or a list of them (repeats made by the caller)."""
    if isinstance(result, Runs):
        if not result.results:
            raise UsageError("these runs have no results yet")
        return result
    if isinstance(result, EvaluationResult):
        return Runs(results=[result])
    if (
        isinstance(result, (list, tuple))
        and result
        and all(isinstance(item, EvaluationResult) for item in result)
    ):
        return Runs(results=list(result))
    raise UsageError(
        "result must be an EvaluationResult, a list of them (one per repeat) or Runs from "
        f"evaluate_repeated, got {type(result).__name__}"
    )


__all__ = ["Runs", "as_runs", "evaluate_repeated"]
