"""DSPyOptimizer: MIPROv2 (DSPy, the `dspy` extra) searches the instruction and the few-shot
demos of one of the judge's prompts; both are kept.

The prompt becomes a `dspy.Predict` whose inputs are the prompt's inputs and whose output is the
answer the prompt asks for; every labelled training row becomes a `dspy.Example` through the
same builders `align` uses, so the demos MIPROv2 picks are examples in the prompt's own shape.
DSPy reaches the judge through `AssayEngine`, a DSPy engine over assay's model (the call budget
applies to every call DSPy makes). The DSPy metric is the per-row loss made "higher is better"
(negated for MSE/Huber), so MIPROv2 maximises agreement, never disagreement.
Only the rows given are read; MIPROv2 splits its own validation part off them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay._util.deps import require
from assay._util.sync import run_sync
from assay.alignment.examples import builder_for, example_for
from assay.alignment.losses import Loss
from assay.alignment.optimizers.base import Optimizer
from assay.alignment.scoring import (
    CallBudget,
    Counted,
    judge_of,
    label_kind,
    metric_fields,
    normalise_label,
)
from assay.errors import BudgetExhausted, UsageError
from assay.metrics.aligned import TEMPLATE, AlignedExample
from assay.models.types import ChatMessage


def _dspy() -> Any:
    return require("dspy", extra="dspy", feature="DSPyOptimizer")


def answer_text(output: Any) -> str:
    """The answer a prompt's example gives, as the text DSPy's output field holds."""
    if isinstance(output, dict):
        for key in ("value", "score"):
            if key in output:
                return str(output[key])
    return str(output)


def read_answer(text: Any, kind: str) -> float | str | None:
    """The value in a predicted answer: yes/no as 1/0, else the first number, else the text."""
    words = re.findall(r"[a-z]+|-?\d+(?:\.\d+)?", str(text).lower())
    if kind == "binary":
        for word in words:
            if word in ("yes", "pass", "true"):
                return 1.0
            if word in ("no", "fail", "false"):
                return 0.0
        return None
    if kind in ("ordinal", "numeric"):
        for word in words:
            try:
                return float(word)
            except ValueError:
                continue
        return None
    return str(text).strip()


class AssayEngine:
    """A DSPy engine (`complete(Request) -> Response`, DSPy's current LM interface) that answers
    through an assay model, charging every call to the optimizer's budget."""

    def __init__(self, llm: Any, budget: CallBudget, on_call: Any = None) -> None:
        self.llm = Counted(llm, budget)
        self.on_call = on_call  # told after every answered call (the progress bar)

    def complete(self, request: Any) -> Any:
        lm15 = _dspy().lm15
        messages = []
        if request.system is not None:
            system = (
                request.system
                if isinstance(request.system, str)
                else "".join(getattr(part, "text", "") or "" for part in request.system)
            )
            messages.append(ChatMessage(role="system", content=system))
        messages.extend(ChatMessage(role=m.role, content=m.text or "") for m in request.messages)
        params = {
            name: getattr(request.config, name)
            for name in ("temperature", "max_tokens", "seed")
            if getattr(request.config, name, None) is not None
        }
        response = run_sync(self.llm.agenerate(messages, **params))
        if self.on_call is not None:
            self.on_call()
        generation = response.generations[0]
        usage = response.usage
        return lm15.Response(
            id=None,
            model=request.model,
            message=lm15.Message.assistant((lm15.TextPart(generation.text),)),
            finish_reason="length" if generation.finish_reason == "length" else "stop",
            usage=lm15.Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.input_tokens + usage.output_tokens,
            ),
        )

    def stream(self, request: Any) -> Any:
        return _dspy().lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release: the assay model keeps its own clients."""


def _language_model(llm: Any, budget: CallBudget, temperature: float, on_call: Any = None) -> Any:
    dspy = _dspy()
    return dspy.LM(
        f"assay/{getattr(llm, 'model', 'judge')}",
        engine=AssayEngine(llm, budget, on_call),
        cache=False,  # assay's own response cache sits under the model
        temperature=temperature,
        num_retries=0,  # assay's model layer retries
    )


@dataclass
class DSPyOptimizer(Optimizer):
    num_candidates: int = 10
    max_bootstrapped_demos: int = 5
    max_labeled_demos: int = 5
    init_temperature: float = 1.0
    auto: Literal["light", "medium", "heavy"] | None = "light"
    num_threads: int | None = None
    max_errors: int | None = None
    seed: int = 9
    verbose: bool = False
    track_stats: bool = True
    log_dir: str | None = None
    metric_threshold: float | None = None
    cache: Any = None
    num_trials: int | None = None

    def __post_init__(self) -> None:
        if self.auto not in (None, "light", "medium", "heavy"):
            raise UsageError(f"auto must be 'light', 'medium', 'heavy' or None, got {self.auto!r}")
        self._cache: dict[Any, dict[str, str]] = {}

    def optimize(
        self,
        dataset: Any,
        loss: Loss,
        config: dict[str, Any] | None = None,
        run_config: Any = None,
        batch_size: int | None = None,
        callbacks: Any = None,
        with_debugging_logs: bool = False,
        raise_exceptions: bool = True,
    ) -> dict[str, str]:
        dspy = _dspy()
        config = dict(config or {})
        rows = self._ready(dataset, loss)
        prompt_id = self.target_prompt(config)
        key = (
            tuple(e.id for e in rows),
            type(loss).__name__,
            repr(sorted(config.items())),
            prompt_id,
        )
        if key in self._cache:  # the same rows, loss and settings: the answer already found
            return dict(self._cache[key])
        kind = label_kind(self.metric, rows.labels)
        build = builder_for(self.metric)
        if build is None:
            raise UsageError(
                f"DSPyOptimizer cannot turn rows into examples for {type(self.metric).__name__}"
            )
        examples, pool = [], []
        inputs: tuple[str, ...] = ()
        for row in rows:
            label = normalise_label(kind, row.label)
            try:
                built = example_for(
                    self.metric, metric_fields(self.metric, row.fields), label, row.reason, kind
                )
            except UsageError:
                continue
            if built is None or built[0] != prompt_id:
                continue
            _, values, output = built
            inputs = tuple(values)
            text_values = {name: _plain_text(value) for name, value in values.items()}
            examples.append(
                dspy.Example(**text_values, answer=answer_text(output), label=label).with_inputs(
                    *inputs
                )
            )
            pool.append(
                AlignedExample(
                    id=row.id,
                    label=label,
                    prompt_id=prompt_id,
                    input=values,
                    output=output,
                    group=row.group_key,
                )
            )
        if len(examples) < 2:
            raise UsageError(
                f"DSPyOptimizer needs at least 2 rows that make examples for {prompt_id!r}; got {len(examples)}"
            )
        budget = CallBudget(config.get("max_calls", self.max_calls))
        progress = Progress(
            TextColumn(f"[bold]DSPy MIPROv2 on {self.metric.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("calls of the budget"),
            TimeElapsedColumn(),
            console=Console(stderr=True, quiet=not self.show_progress),
            transient=True,
        )
        task = progress.add_task("calls", total=budget.max_calls)
        lm = _language_model(
            judge_of(self.metric, self.llm),
            budget,
            self.init_temperature,
            on_call=lambda: progress.update(task, completed=budget.used),
        )
        fields = {name: dspy.InputField() for name in inputs}
        fields["answer"] = dspy.OutputField(
            desc="the judge's answer, in the form the instruction asks for"
        )
        signature = dspy.Signature(fields, self.instruction_of(prompt_id))
        program = dspy.Predict(signature)

        def agreement(example: Any, prediction: Any, trace: Any = None) -> float:
            """Higher is better, whatever the loss: DSPy maximises it."""
            predicted = read_answer(getattr(prediction, "answer", ""), kind)
            if kind in ("nominal", "ranking"):
                return float(predicted is not None and str(predicted) == str(example.label))
            if predicted is None:  # an unreadable answer scores as badly as a wrong one can
                worst = 1.0 if kind == "binary" else max(1.0, abs(float(example.label)))
                return (
                    0.0
                    if loss.higher_is_better
                    else -loss([float(example.label) + worst], [float(example.label)])
                )
            value = loss([float(predicted)], [float(example.label)])
            return value if loss.higher_is_better else -value

        options: dict[str, Any] = {
            "metric": agreement,
            "prompt_model": lm,
            "task_model": lm,
            "max_bootstrapped_demos": self.max_bootstrapped_demos,
            "max_labeled_demos": self.max_labeled_demos,
            "auto": self.auto,
            "num_threads": self.num_threads,
            "max_errors": self.max_errors,
            "seed": self.seed,
            "init_temperature": self.init_temperature,
            "verbose": self.verbose,
            "track_stats": self.track_stats,
            "log_dir": self.log_dir,
            "metric_threshold": self.metric_threshold,
        }
        # MIPROv2 keeps 80% of the rows for validation; minibatches of 35 need more rows than that.
        compile_options: dict[str, Any] = {"minibatch": int(len(examples) * 0.8) > 35}
        if self.auto is None:  # DSPy refuses num_candidates / num_trials together with auto
            options["num_candidates"] = self.num_candidates
            compile_options["num_trials"] = self.num_trials or max(2, self.num_candidates)
        try:
            with progress, dspy.context(lm=lm):
                optimized = dspy.MIPROv2(**options).compile(
                    program, trainset=examples, **compile_options
                )
        except Exception as exc:
            if budget.max_calls is not None and budget.used >= budget.max_calls:
                # DSPy wraps the refused call in its own error; say plainly what stopped the run.
                raise BudgetExhausted(
                    f"DSPyOptimizer stopped: the call budget of {budget.max_calls} model calls is "
                    "spent (raise max_calls, or lower num_candidates / num_trials)"
                ) from exc
            raise
        predictor = optimized.predictors()[0]
        instruction = predictor.signature.instructions
        shape = pool[0].output
        demos = [
            _demo_example(demo, inputs, prompt_id, index, shape)
            for index, demo in enumerate(predictor.demos)
        ]
        self.chosen_demos = [d for d in demos if d is not None]
        self.last_run = {
            "optimizer": "DSPyOptimizer",
            "prompt": prompt_id,
            "loss": type(loss).__name__,
            "calls": budget.used,
            "demos": len(self.chosen_demos),
        }
        found = {
            prompt_id: instruction
            if prompt_id != TEMPLATE or self.acceptable(prompt_id, instruction)
            else self.instruction_of(prompt_id)
        }
        self._cache[key] = dict(found)
        return found


def _plain_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _demo_example(
    demo: Any, inputs: tuple[str, ...], prompt_id: str, index: int, shape: Any
) -> AlignedExample | None:
    """A demo MIPROv2 chose, as an example in the prompt's own answer shape."""
    data = dict(demo.items()) if hasattr(demo, "items") else dict(demo)
    if not all(name in data for name in inputs) or "answer" not in data:
        return None
    answer: Any = data["answer"]
    if isinstance(shape, dict):  # a JSON answer: the value (or score) goes in its own key
        key = "value" if "value" in shape else "score"
        number = read_answer(answer, "numeric")
        value = number if key == "score" and number is not None else answer
        if key == "score" and isinstance(value, float) and value.is_integer():
            value = int(value)
        answer = {"reason" if key == "value" else "feedback": "", key: value}
    return AlignedExample(
        id=f"dspy-demo-{index}",
        label=data.get("label"),
        prompt_id=prompt_id,
        input={name: data[name] for name in inputs},
        output=answer,
        group=None,
    )


__all__ = ["DSPyOptimizer", "answer_text", "read_answer"]
