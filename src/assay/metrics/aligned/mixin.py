"""`Alignable`, the mixin that gives LLM judges `align` and its siblings (see the package docstring)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import UsageError
from assay.metrics.aligned.state import AlignedState

if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    from assay.metrics.base import Metric as _MixedInto
else:
    _MixedInto = object


def _aligner(aligner: Any) -> Any:
    """The alignment algorithms: the caller's `aligner`, else the default one in
    `assay.alignment`. That package is a surface above metrics and imports them, so metrics never
    import it at module level; resolving the default by name at call time keeps every import
    pointing down the layers, and a caller (or a test) can hand in its own algorithms."""
    if aligner is not None:
        return aligner
    return importlib.import_module("assay.alignment").default_aligner()


class Alignable(_MixedInto):
    """Mixin of the LLM judges: `align`, `align_and_validate`, `validate_alignment`,
    `optimize_prompts`, `train`, and the aligned state's save/load."""

    @property
    def alignment(self) -> AlignedState | None:
        return getattr(self, "_aligned", None)

    def spec(self) -> dict[str, Any]:
        """The metric's identity, with the alignment's fingerprint when it is aligned: results and
        checkpoints then tell an aligned judge from the plain one."""
        spec = super().spec()
        if self.alignment is not None:
            spec["alignment"] = self.alignment.fingerprint()
        return spec

    def set_alignment(self, state: AlignedState | None, *, source: str = "the alignment") -> Any:
        if state is not None:
            state.check_fits(self, source)
        object.__setattr__(self, "_aligned", state)
        return self

    def clear_alignment(self) -> Any:
        return self.set_alignment(None)

    def align(
        self,
        train: Any,
        embedding_model: Any = None,
        max_similar_examples: int = 3,
        similarity_threshold: float | None = None,
        *,
        aligner: Any = None,
        **options: Any,
    ) -> Any:
        """Fit examples (and a threshold for score judges) on labelled rows; returns the metric.
        Options: llm, balance, calibrate, selection, objective, max_calls, show_progress, ..."""
        state = _aligner(aligner).fit(
            self,
            train,
            embeddings=embedding_model,
            k=max_similar_examples,
            similarity_threshold=similarity_threshold,
            **options,
        )
        return self.set_alignment(state)

    def align_and_validate(
        self,
        train: Any,
        test: Any = None,
        embedding_model: Any = None,
        llm: Any = None,
        test_size: float = 0.2,
        random_state: int = 42,
        *,
        max_similar_examples: int = 3,
        similarity_threshold: float | None = None,
        aligner: Any = None,
        **options: Any,
    ) -> Any:
        """Align on `train` (split off a test part first when `test` is None) and return the
        AlignmentReport on the held-out rows, before and after."""
        return _aligner(aligner).align_and_validate(
            self,
            train,
            test,
            embeddings=embedding_model,
            llm=llm,
            test_size=test_size,
            seed=random_state,
            k=max_similar_examples,
            similarity_threshold=similarity_threshold,
            **options,
        )

    def validate_alignment(
        self, llm: Any = None, test: Any = None, mapping: Any = None, *, aligner: Any = None
    ) -> Any:
        """The AlignmentReport of this metric, as it is now, on labelled rows."""
        return _aligner(aligner).validate(self, test, llm=llm, mapping=mapping or {})

    def optimize_prompts(self, dataset: Any, config: Any, *, aligner: Any = None) -> Any:
        """Rewrite the instruction with `config.optimizer` under `config.loss`; returns
        {prompt id: instruction} and keeps them in the aligned state."""
        return _aligner(aligner).optimize_prompts(self, dataset, config)

    def train(
        self,
        path: str | Path,
        demonstration_config: Any = None,
        instruction_config: Any = None,
        callbacks: Any = None,
        run_config: Any = None,
        batch_size: int | None = None,
        with_debugging_logs: bool = False,
        raise_exceptions: bool = True,
        *,
        aligner: Any = None,
    ) -> None:
        """Ragas' legacy entry point: train on an annotation JSON file."""
        _aligner(aligner).train(
            self,
            path,
            demonstration_config=demonstration_config,
            instruction_config=instruction_config,
            raise_exceptions=raise_exceptions,
        )

    def save_alignment(self, path: str | Path) -> Path:
        """Write the aligned state with the metric's description (`spec()`) to a JSON file."""
        state = self.alignment
        if state is None:
            raise UsageError(f"{self.name!r} is not aligned; call align() first")
        target = Path(path)
        payload = {"metric": self.spec(), "alignment": state.to_json()}
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            partial.write_text(json.dumps(payload, indent=2, ensure_ascii=False), "utf-8")
            partial.replace(target)  # never a half-written file under the real name
        except OSError as exc:
            raise UsageError(f"cannot save the alignment to {target}: {exc}") from exc
        return target

    def load_alignment(self, path: str | Path, embedding_model: Any = None) -> Any:
        """Attach the state saved by `save_alignment` (checked against this metric's prompts)."""
        source = Path(path)
        try:
            payload = json.loads(source.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read the alignment {source}: {exc}") from exc
        data = payload.get("alignment", payload) if isinstance(payload, dict) else payload
        state = AlignedState.from_json(data, str(source))
        state.embeddings = embedding_model
        return self.set_alignment(state, source=str(source))


__all__ = ["Alignable"]
