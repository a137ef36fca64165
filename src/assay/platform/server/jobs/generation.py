"""Answering an experiment's units: one cohort × one example becomes one trace row.

A cohort with a model asks it through `assay.models.llm_factory` (the cohort's model and system
prompt override the task's; the example's context is given with the question); a cohort that
names a registered RAG pipeline POSTs the question to it with httpx (once, with its own timeout)
and keeps its answer and retrieved contexts; a pipeline that does not answer counts towards
being down for the run as a model does. Either way a failed call is the row's typed error
(`error_type`, `error_message`), stored like any row and judged as "could not be generated",
except when the model is down for the run (`calls.Gate`): then `generate` returns None, or the
row carries `GATE_KEY` and the run drops it once the model is down, and the unit is left for a
resume.

Separate from `run.py` because it only builds rows, with no database access and no
claim: the run decides what is missing and stores what this module returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from assay.platform.server.jobs.calls import EndpointDown, Gate
from assay.platform.server.jobs.claims import Claim
from assay.platform.server.jobs.pipeline_client import PipelineError, pipeline_answer
from assay.platform.server.storage import models
from assay.schema.outcome import Error

# a failed row's key naming the model (or pipeline) whose failure it is, when that failure
# counts towards the model being down: the run drops the row if the model is down by then
GATE_KEY = "_down_if"


@dataclass
class Unit:
    cohort: models.ExperimentCohort
    example: models.Example


def contexts_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value or []]


def user_message(example: models.Example) -> str:
    contexts = contexts_of(example.ground_truth_context)
    if not contexts:
        return example.question
    joined = "\n\n".join(contexts)
    return f"Context:\n{joined}\n\nQuestion: {example.question}"


class Generator:
    """Generates the trace rows of one run. `llm` gives the (cached) model for a model string;
    `pipelines` maps each registered pipeline's name to its URL and timeout; `gate` says which
    models are down for the run."""

    def __init__(
        self,
        claim: Claim,
        llm: Callable[[str], Any],
        pipelines: dict[str, tuple[str, float]],
        gate: Gate | None = None,
    ) -> None:
        self.claim, self._llm, self._pipelines = claim, llm, pipelines
        self.gate = gate
        self._http: httpx.AsyncClient | None = None  # for RAG pipeline cohorts, made when needed

    async def aclose(self) -> None:
        """Close the pipelines' HTTP client, on the loop it was made on."""
        if self._http is not None:
            await self._http.aclose()

    async def generate(self, task: dict[str, Any], unit: Unit) -> dict[str, Any] | None:
        """The unit's trace row, or None when its model is down for the run (left undone)."""
        if unit.cohort.rag_pipeline is not None:
            return await self._ask_pipeline(unit)
        from assay.errors import AssayError

        model = unit.cohort.generator_model or task.get("generator_model") or ""
        if self.gate is not None and self.gate.is_down(model):
            return None
        system = (
            unit.cohort.system_prompt
            if unit.cohort.system_prompt is not None
            else task.get("system_prompt") or ""
        )
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user_message(unit.example)}
        ]
        row = self._trace_row(
            unit,
            contexts=contexts_of(unit.example.ground_truth_context),
            raw_input={"model": model, "messages": messages},
            meta={"cohort": unit.cohort.name, "source": "experiment"},
            model=model or "default",
        )
        started = time.monotonic()
        try:
            response = await self._llm(model).agenerate(messages)
        except EndpointDown:
            return None
        except AssayError as exc:
            if self.gate is not None and self.gate.is_down(model):
                return None  # the call that found it down: a resume asks it again
            if getattr(exc, "transient", False):
                row[GATE_KEY] = model  # dropped by the run if the model goes down meanwhile
            row.update(_error_fields(exc))
        except Exception as exc:  # a provider SDK's own failure: still a typed, stored outcome
            row.update(_error_fields(exc))
        else:
            row.update(
                output=response.text,
                raw_output={
                    "text": response.text,
                    "model": response.model,
                    "cached": response.cached,
                },
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
            )
        row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        return row

    def _trace_row(self, unit: Unit, **fields: Any) -> dict[str, Any]:
        """A generation's trace row before it runs: no output, no usage, no error yet."""
        return {
            "project_id": self.claim.project_id,
            "experiment_id": self.claim.experiment_id,
            "cohort_id": unit.cohort.id,
            "example_id": unit.example.id,
            "input": unit.example.question,
            "output": None,
            "raw_output": None,
            "input_tokens": 0,
            "output_tokens": 0,
            "latency_ms": 0.0,
            "error_type": None,
            "error_message": None,
            **fields,
        }

    async def _ask_pipeline(self, unit: Unit) -> dict[str, Any] | None:
        """The cohort's registered RAG pipeline answers the example: its answer and retrieved
        contexts become the trace (a failure is the trace's typed error)."""
        name = unit.cohort.rag_pipeline
        row = self._trace_row(
            unit,
            contexts=[],
            raw_input={"rag_pipeline": name, "question": unit.example.question},
            meta={"cohort": unit.cohort.name, "source": "experiment", "rag_pipeline": name},
            model=f"pipeline:{name}",
        )
        started = time.monotonic()
        registered = self._pipelines.get(name) if name is not None else None
        gated = f"pipeline:{name}"  # the gate's name for it, as the trace's model says
        if self.gate is not None and self.gate.is_down(gated):
            return None
        try:
            if registered is None:
                raise PipelineError(f"no RAG pipeline named {name!r} is registered any more")
            if self._http is None:
                self._http = httpx.AsyncClient()
            answer, contexts, raw = await pipeline_answer(
                self._http, registered[0], unit.example.question, registered[1]
            )
        except PipelineError as exc:
            if self.gate is not None and exc.unreachable:
                self.gate.failed(gated, exc)
                if self.gate.is_down(gated):
                    return None  # left for a resume, as a model's
                row[GATE_KEY] = gated  # dropped by the run if the pipeline goes down meanwhile
            row.update(error_type="PipelineError", error_message=str(exc)[:4000])
        else:
            if self.gate is not None:
                self.gate.succeeded(gated)
            row.update(output=answer, contexts=contexts, raw_output=raw)
        row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        return row


def _error_fields(exc: BaseException) -> dict[str, str]:
    """A failed generation's `error_type` / `error_message` (cut to what the column keeps),
    through the library's one exception-to-outcome function."""
    error = Error.from_exception(exc)
    return {"error_type": error.error_type, "error_message": error.message[:4000]}


__all__ = ["GATE_KEY", "Generator", "Unit", "contexts_of", "user_message"]
