"""The default alignment algorithms behind `metric.align(...)` and its siblings.

`fit` builds the example pool from the training rows (each row made into an example for the
prompt it teaches, embedded for similarity), then, for judges whose value is a score and labels
that are yes/no, scores every training row with the examples (never its own group's) and picks
the threshold with the best balanced accuracy. Only the rows it is given are read: a test split
handed to `align_and_validate` is scored, never fitted on.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import Any, Literal

from assay._util.sync import run_sync
from assay.alignment import training
from assay.alignment.calibration import (
    Objective,
    calibrate_threshold,
    choose_k,
    default_threshold,
    k_candidates,
    pick_fixed,
)
from assay.alignment.config import DemonstrationConfig, InstructionConfig
from assay.alignment.examples import builder_for, example_for
from assay.alignment.labels import LabeledSet, as_labeled, relabel
from assay.alignment.report import AlignmentReport
from assay.alignment.scoring import (
    CallBudget,
    LabelKind,
    ascore_rows,
    check_rows,
    label_kind,
    metric_fields,
    normalise_label,
)
from assay.errors import UsageError
from assay.metrics.aligned import (
    AlignedExample,
    AlignedState,
    embed,
    prompt_fingerprints,
    query_text,
)
from assay.metrics.base import default_model


class Aligner:
    """Example selection, threshold calibration, validation and the optimizers' entry points."""

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, metric: Any, train: Any, **options: Any) -> AlignedState:
        return run_sync(self.afit(metric, train, **options))

    async def afit(
        self,
        metric: Any,
        train: Any,
        *,
        embeddings: Any = None,
        k: int | str | Sequence[int] = 3,
        similarity_threshold: float | None = None,
        balance: bool = True,
        calibrate: bool = True,
        selection: Literal["similar", "fixed"] = "similar",
        fallback: Literal["balanced", "recent"] = "balanced",
        objective: Objective = "balanced_accuracy",
        llm: Any = None,
        mapping: dict[Any, Any] | None = None,
        max_calls: int | None = None,
        concurrency: int = 4,
        seed: int = 42,
        show_progress: bool = True,
        instructions: dict[str, str] | None = None,
    ) -> AlignedState:
        rows = relabel(as_labeled(train, source="train"), mapping or {})
        check_rows(metric, rows, rows.source)
        candidates = k_candidates(k)
        largest = max(candidates)
        if selection not in ("similar", "fixed"):
            raise UsageError(f"selection must be 'similar' or 'fixed', got {selection!r}")
        if objective not in ("balanced_accuracy", "accuracy", "f1"):
            raise UsageError(
                f"objective must be 'balanced_accuracy', 'accuracy' or 'f1', got {objective!r}"
            )
        if similarity_threshold is not None and not -1 <= similarity_threshold <= 1:
            raise UsageError(
                f"similarity_threshold is a cosine similarity in [-1, 1], got {similarity_threshold!r}"
            )
        if fallback not in ("balanced", "recent"):
            raise UsageError(f"fallback must be 'balanced' or 'recent', got {fallback!r}")
        kind = label_kind(metric, rows.labels)
        notes: list[str] = list(rows.notes)
        pool = self._pool(metric, rows, kind, notes) if largest > 0 else []
        if largest > 0 and not pool and builder_for(metric) is not None:
            notes.append(
                f"no few-shot examples: {type(metric).__name__} cannot take any from these rows"
            )
        needs_vectors = bool(pool) and (selection == "similar" or embeddings is not None)
        if needs_vectors:
            embeddings = (
                embeddings
                or getattr(metric, "embeddings", None)
                or default_model("embeddings", getattr(metric, "language", None))
            )
            by_id = {example.id: example for example in rows}
            texts = [query_text(metric_fields(metric, by_id[e.id].fields)) for e in pool]
            for example, vector in zip(pool, await embed(embeddings, texts), strict=True):
                example.vector = vector
        state = AlignedState(
            metric_class=type(metric).__name__,
            metric_name=metric.name,
            prompts=prompt_fingerprints(metric),
            examples=pool,
            k=candidates[0],
            balance=balance,
            selection=selection,
            similarity_threshold=similarity_threshold,
            fallback=fallback,
            instructions=dict(
                instructions or (metric.alignment.instructions if metric.alignment else {})
            ),
            embeddings=embeddings if selection == "similar" else None,
        )
        if selection == "fixed":
            state.fixed_ids = pick_fixed(pool, candidates[0], balance, seed)
        provenance: dict[str, Any] = {
            "fitted_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "train_rows": len(rows),
            "train_source": rows.source,
            "label_kind": kind,
            "label_counts": rows.label_counts(),
            "examples_in_pool": len(pool),
        }
        calls = 0  # judge calls of the calibration, when it runs
        if len(candidates) > 1 and not pool:
            candidates = (0,)  # no example to show: every candidate would send the same prompts
            notes.append("k=0: no examples in the pool, so there was no k to choose")
        if calibrate and kind == "binary":
            state, calls = await choose_k(
                metric,
                state,
                rows,
                kind,
                candidates,
                pool=pool,
                balance=balance,
                seed=seed,
                objective=objective,
                llm=llm,
                max_calls=max_calls,
                concurrency=concurrency,
                show_progress=show_progress,
                provenance=provenance,
                notes=notes,
            )
        elif len(candidates) > 1:
            largest = max(candidates)
            state = dataclasses.replace(
                state,
                k=largest,
                fixed_ids=pick_fixed(pool, largest, balance, seed) if selection == "fixed" else [],
            )
            provenance["k_candidates"] = list(candidates)
            notes.append(
                f"k={largest}: choosing k needs a threshold calibrated on yes/no labels, "
                "so the largest candidate is used"
            )
        provenance["judge_calls"] = calls
        provenance["notes"] = notes
        state.provenance = provenance
        return state

    def _pool(
        self, metric: Any, rows: LabeledSet, kind: LabelKind, notes: list[str]
    ) -> list[AlignedExample]:
        build = builder_for(metric)
        if build is None:
            notes.append(f"{type(metric).__name__} takes no few-shot examples; threshold only")
            return []
        pool = []
        refused: list[str] = []
        for example in rows:
            label = normalise_label(kind, example.label)
            try:
                built = example_for(
                    metric, metric_fields(metric, example.fields), label, example.reason, kind
                )
            except UsageError as exc:
                refused.append(f"{example.id}: {exc}")
                continue
            if built is None:
                continue
            prompt_id, inputs, output = built
            pool.append(
                AlignedExample(
                    id=example.id,
                    label=label,
                    prompt_id=prompt_id,
                    input=inputs,
                    output=output,
                    group=example.group_key,
                )
            )
        if refused:
            notes.append(f"{len(refused)} row(s) made no example (first: {refused[0]})")
        skipped = len(rows) - len(pool) - len(refused)
        if skipped:
            notes.append(f"{skipped} row(s) too long or empty for an example")
        return pool

    # -- validating --------------------------------------------------------------------------
    def validate(
        self,
        metric: Any,
        test: Any,
        *,
        llm: Any = None,
        mapping: dict[Any, Any] | None = None,
        max_calls: int | None = None,
        show_progress: bool = True,
        baseline: Any = None,
        **report_options: Any,
    ) -> AlignmentReport:
        return run_sync(
            self.avalidate(
                metric,
                test,
                llm=llm,
                mapping=mapping,
                max_calls=max_calls,
                show_progress=show_progress,
                baseline=baseline,
                **report_options,
            )
        )

    async def avalidate(
        self,
        metric: Any,
        test: Any,
        *,
        llm: Any = None,
        mapping: dict[Any, Any] | None = None,
        max_calls: int | None = None,
        show_progress: bool = True,
        baseline: Any = None,
        concurrency: int = 4,
        **report_options: Any,
    ) -> AlignmentReport:
        """The report of `metric` on `test`; with `baseline` (another metric, e.g. the unaligned
        one), both are scored on the same rows and compared pair by pair."""
        if test is None:
            raise UsageError("validate_alignment needs labelled test rows")
        rows = relabel(as_labeled(test, source="test"), mapping or {})
        check_rows(metric, rows, rows.source)
        kind = label_kind(metric, rows.labels)
        budget = CallBudget(max_calls)
        before = None
        if baseline is not None:
            before = await ascore_rows(
                baseline,
                rows,
                llm=llm,
                budget=budget,
                concurrency=concurrency,
                description=f"{metric.name} before",
                show_progress=show_progress,
            )
        after = await ascore_rows(
            metric,
            rows,
            llm=llm,
            budget=budget,
            concurrency=concurrency,
            description=f"{metric.name}" + (" after" if baseline is not None else ""),
            show_progress=show_progress,
        )
        threshold = self._threshold_of(metric, kind)
        return AlignmentReport.build(
            metric=metric.name,
            kind=kind,
            rows=rows,
            scores=after,
            threshold=threshold,
            before=before,
            before_threshold=self._threshold_of(baseline, kind) if baseline is not None else None,
            judge_calls=budget.used,
            **report_options,
        )

    def _threshold_of(self, metric: Any, kind: LabelKind) -> float | None:
        if kind != "binary":
            return None
        state = getattr(metric, "alignment", None)
        if state is not None and state.threshold is not None:
            return state.threshold
        return default_threshold(metric)

    def align_and_validate(
        self,
        metric: Any,
        train: Any,
        test: Any = None,
        *,
        embeddings: Any = None,
        llm: Any = None,
        test_size: float = 0.2,
        seed: int = 42,
        show_progress: bool = True,
        report_options: dict[str, Any] | None = None,
        instruction_config: InstructionConfig | None = None,
        **options: Any,
    ) -> AlignmentReport:
        """Align `metric` on `train` and report held-out agreement before and after on `test`
        (split off `train` first when not given). With `instruction_config`, its optimizer
        rewrites the instruction first, on the training rows only (after the split). The metric
        is left aligned; "before" is the metric with no alignment at all."""
        rows = as_labeled(train, source="train")
        if test is None:
            rows, test_rows = rows.train_test_split(test_size=test_size, seed=seed)
        else:
            test_rows = as_labeled(test, source="test")
        overlap = {e.group_key for e in rows} & {e.group_key for e in test_rows}
        if overlap:
            raise UsageError(
                f"train and test share {len(overlap)} group(s) (e.g. {sorted(overlap)[0]!r}); "
                "a held-out test must not hold rows of a training group"
            )
        unaligned = copy.copy(metric).clear_alignment()
        if instruction_config is not None:
            self.optimize_prompts(
                metric, relabel(rows, options.get("mapping") or {}), instruction_config
            )
        state = self.fit(
            metric,
            rows,
            embeddings=embeddings,
            llm=llm,
            seed=seed,
            show_progress=show_progress,
            **options,
        )
        metric.set_alignment(state)
        mapping = options.get("mapping")
        return self.validate(
            metric,
            test_rows,
            llm=llm,
            mapping=mapping,
            show_progress=show_progress,
            baseline=unaligned,
            **(report_options or {}),
        )

    # -- optimizers (assay.alignment.training) ---------------------------------------------
    def optimize_prompts(
        self, metric: Any, dataset: Any, config: InstructionConfig
    ) -> dict[str, str]:
        return training.optimize_prompts(metric, dataset, config)

    def train(
        self,
        metric: Any,
        path: Any,
        *,
        demonstration_config: DemonstrationConfig | None = None,
        instruction_config: InstructionConfig | None = None,
        raise_exceptions: bool = True,
    ) -> None:
        training.train(
            self,
            metric,
            path,
            demonstration_config=demonstration_config,
            instruction_config=instruction_config,
        )


_DEFAULT = Aligner()


def default_aligner() -> Aligner:
    return _DEFAULT


__all__ = ["Aligner", "calibrate_threshold", "default_aligner", "default_threshold"]
