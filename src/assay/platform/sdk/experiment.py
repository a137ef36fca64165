"""`Experiment`: cohorts × a dataset × criteria, run by the server's worker.

`run(poll_interval=2)` submits the experiment, shows a live progress bar fed by the server and
returns the results when it is done. `run_async()` only submits and returns a `Future` of the
server's answer (`{"id", "status", ...}`); `results()` fetches the results at any time.

`cancel()` stops the experiment on the server (what was generated and judged is kept; a `run()`
waiting on it returns the partial results with status "cancelled"); `resume()` queues a cancelled
or failed experiment again, and the next `run()` waits for it instead of submitting a new one. A
resumed experiment repeats no stored generation or judgement, and ends with the results an
uninterrupted run would have had.

Ctrl-C (KeyboardInterrupt) in `run()` cancels the experiment on the server too (one request, at
most `INTERRUPT_CANCEL_TIMEOUT` seconds, no retries), says on stderr whether that worked, and
re-raises the KeyboardInterrupt. What was stored is kept; `resume()` continues it.

The results dict:

    {"id", "name", "status": "completed" | "failed" | "cancelled" | "running" | "queued",
     "error": str | None,
     "dataset": {"id", "version"}, "judge_model", "cohorts": [name, ...], "criteria": [name, ...],
     "summary": [{"cohort", "criterion", "mean", "n", "n_scored", "coverage", "ci95": [low, high]}],
     "scores": {cohort: {criterion: {"mean", "n", "n_scored", "coverage", "ci95"}}},
     "rows": [{"cohort", "example_id", "question", "ground_truth_answer", "answer", "contexts", "model",
               "generation_error": None | {"type", "message"},
               "scores": {criterion: {"status": "ok", "value", "reason"}
                                   | {"status": "skipped", "reason"}
                                   | {"status": "error", "error_type", "message"}}}],
     "progress": {"total", "completed", "failed", "pending", "percent", "eta_s"}}

`mean` is over the rows with a value (None when there is none, never NaN), `n` counts every
example, `n_scored` those with a value, `coverage` = n_scored / n; `ci95` is a seeded bootstrap
interval of the mean (None without a value). Rows are in cohort order, then dataset order.
A cancelled experiment's rows are those generated before it stopped; its cells not yet judged
count in `n` but not in `n_scored`, and `progress.pending` says how many there are.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from assay.platform.sdk.client import Client, current
from assay.platform.sdk.errors import Conflict, PlatformError, ValidationFailed
from assay.platform.sdk.objects import Cohort, Criteria, Dataset, Task, _pages

_executor: ThreadPoolExecutor | None = None
FINISHED = ("completed", "failed", "cancelled")
INTERRUPT_CANCEL_TIMEOUT = 5.0  # seconds the cancel after a Ctrl-C may take


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="assay-experiment")
    return _executor


@contextmanager
def _ctrl_c_deferred() -> Iterator[threading.Event]:
    """Within the block, Ctrl-C sets the returned event instead of raising KeyboardInterrupt
    wherever the main thread happens to be: raised inside the progress bar's locks, it can leave
    one taken, and the bar's refresh thread then never ends, so the process hangs instead of
    cancelling. The caller raises KeyboardInterrupt itself at a safe point; a second Ctrl-C raises
    at once. Off the main thread (no signal arrives there) the event is never set."""
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def on_ctrl_c(signum: int, frame: Any) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt
        interrupted.set()

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield interrupted
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )


class Experiment:
    def __init__(
        self, name: str, dataset: Any, task: Any, cohorts: Any, criteria: Any, judge_model: str
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValidationFailed("Experiment: name must be a non-empty string", field="name")
        if judge_model is not None and not isinstance(judge_model, str):
            raise ValidationFailed(
                "Experiment: judge_model must be a model string", field="judge_model"
            )
        self.name, self.dataset, self.task = name, dataset, task
        self.cohorts, self.criteria, self.judge_model = cohorts, criteria, judge_model or ""
        self._process_cohorts()  # a malformed cohort list is an error before anything is sent
        self.id: int | None = None
        self._resumed = False  # the next run() waits for the resumed experiment

    # -- the seed's processing steps -------------------------------------------------------------
    def _process_dataset(self, dataset: Any) -> int:
        return Dataset._resolve(dataset)

    def _process_task(self, task: Any) -> int:
        return Task._resolve(task)

    def _process_cohorts(self) -> list[dict[str, Any]]:
        cohorts = self.cohorts
        if isinstance(cohorts, str):
            try:
                cohorts = json.loads(cohorts)
            except ValueError:
                raise ValidationFailed(
                    "Experiment: cohorts is a string but not a JSON list", field="cohorts"
                ) from None
        if isinstance(cohorts, (Cohort, dict)):
            cohorts = [cohorts]
        if not isinstance(cohorts, (list, tuple)) or not cohorts:
            raise ValidationFailed(
                "Experiment: cohorts must be a non-empty list of Cohort", field="cohorts"
            )
        out = []
        for index, cohort in enumerate(cohorts):
            if isinstance(cohort, dict):
                cohort = Cohort.from_dict(cohort)
            if not isinstance(cohort, Cohort):
                raise ValidationFailed(
                    f"Experiment: cohorts[{index}] must be a Cohort, got {type(cohort).__name__}",
                    field="cohorts",
                )
            out.append(cohort.to_dict())
        return out

    def _process_criteria(self, criteria: Any) -> list[int]:
        if isinstance(criteria, str):
            try:
                parsed = json.loads(criteria)
            except ValueError:
                parsed = [criteria]  # one criterion's name
            criteria = parsed if isinstance(parsed, list) else [criteria]
        if isinstance(criteria, (Criteria, dict, int)):
            criteria = [criteria]
        if not isinstance(criteria, (list, tuple)) or not criteria:
            raise ValidationFailed(
                "Experiment: criteria must be a non-empty list of Criteria, names or ids",
                field="criteria",
            )
        return [Criteria._resolve(c) for c in criteria]

    def _build_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "name": self.name,
            "dataset_id": self._process_dataset(self.dataset),
            "task_id": self._process_task(self.task),
            "cohorts": self._process_cohorts(),
            "criteria_ids": self._process_criteria(self.criteria),
            "judge_model": self.judge_model,
        }
        if isinstance(self.dataset, Dataset) and self.dataset.version is not None:
            payload["dataset_version"] = self.dataset.version
        return payload

    def _call_api(self, payload: dict[str, Any]) -> dict[str, Any]:
        response = current().request("POST", "/experiments", json=payload)
        self.id = response["id"]
        self._resumed = False
        return response

    def _submitted(self, action: str) -> int:
        if self.id is None:
            raise PlatformError(
                f"experiment {self.name!r} has not been submitted, so it cannot be {action}: "
                "call run() or run_async() first"
            )
        return self.id

    # -- cancel and resume -------------------------------------------------------------------------
    def cancel(self) -> dict[str, Any]:
        """Stop the experiment on the server; what is stored is kept. Returns its progress
        (status "cancelled"). `Conflict` when it has already finished."""
        ident = self._submitted("cancelled")
        return current().request("POST", f"/experiments/{ident}/cancel")

    def resume(self) -> dict[str, Any]:
        """Queue a cancelled or failed experiment again (it continues where it stopped); the next
        `run()` waits for it. Returns its progress (status "queued"). `Conflict` otherwise."""
        ident = self._submitted("resumed")
        progress = current().request("POST", f"/experiments/{ident}/resume")
        self._resumed = True
        return progress

    # -- running -----------------------------------------------------------------------------------
    def run_async(self) -> Future:
        """Submit without waiting; the Future holds the server's answer (its `id` and `status`)."""
        return _pool().submit(lambda: self._call_api(self._build_payload()))

    def run(self, poll_interval: float = 2) -> dict[str, Any]:
        """Submit, show the server's progress live, and return the results (see the module doc).
        After `resume()`, wait for the resumed experiment instead of submitting a new one."""
        if not isinstance(poll_interval, (int, float)) or poll_interval <= 0:
            raise ValidationFailed(
                "poll_interval must be a positive number of seconds", field="poll_interval"
            )
        submitted: int | None = None
        try:
            if not self._resumed:
                self._call_api(self._build_payload())
            self._resumed = False
            submitted = self.id
            progress = self._watch(poll_interval)
        except KeyboardInterrupt:
            self._cancel_after_interrupt(submitted)
            raise
        if progress["status"] == "failed":
            raise PlatformError(
                f"experiment {self.name!r} (id {self.id}) failed: {progress.get('error') or 'unknown error'}"
            )
        return self.results()

    def _cancel_after_interrupt(self, ident: int | None) -> None:
        """Best effort, after Ctrl-C: cancel the experiment being watched on the server with one
        short request (a second Ctrl-C stops the attempt), and say what happened."""
        from rich.console import Console

        console = Console(stderr=True)
        label = f"experiment {self.name!r}"
        if ident is None:
            console.print(
                f"Interrupted while submitting {label}: if the server got it, it runs on; "
                "find it with GET /api/v1/experiments?name=... and cancel it"
            )
            return
        client = current()
        quick = Client(
            client.key, client.base_url, timeout=INTERRUPT_CANCEL_TIMEOUT, rate_limit_retries=0
        )
        try:
            progress = quick.request("POST", f"/experiments/{ident}/cancel")
        except Conflict:
            console.print(f"Interrupted: {label} (id {ident}) had already finished on the server")
        except PlatformError as exc:
            console.print(
                f"Interrupted: could not cancel {label} (id {ident}) on the server, so it may "
                f"still be running ({type(exc).__name__}: {exc}); cancel it with "
                f"Experiment.cancel() or POST /api/v1/experiments/{ident}/cancel"
            )
        except KeyboardInterrupt:
            console.print(f"Interrupted again: {label} (id {ident}) was not cancelled")
        else:
            done = progress["completed"] + progress["failed"]
            console.print(
                f"Interrupted: cancelled {label} (id {ident}) on the server; the {done} of "
                f"{progress['total']} cells done are kept, and resume() continues it"
            )
        finally:
            quick.close()

    def _watch(self, poll_interval: float) -> dict[str, Any]:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
        )

        client = current()
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("ETA {task.fields[eta]}"),
        )
        with (
            _ctrl_c_deferred() as interrupted,
            Progress(*columns, console=Console(stderr=True)) as bar,
        ):
            task = bar.add_task(self.name, total=None, failed=0, eta="…")
            while not interrupted.is_set():
                state = client.request("GET", f"/experiments/{self.id}/progress")
                eta = state.get("eta_s")
                finished = state["status"] in FINISHED
                stopped = state["status"] in ("failed", "cancelled")
                bar.update(
                    task,
                    total=state["total"] or None,
                    completed=state["completed"] + state["failed"],
                    failed=state["failed"],
                    eta="-" if finished else "…" if eta is None else f"{eta:.0f}s",
                    description=f"{self.name} ({state['status']})" if stopped else self.name,
                )
                if finished:  # the bar stops where the experiment did (e.g. cancelled at 40%)
                    return state
                interrupted.wait(poll_interval)
        raise KeyboardInterrupt  # Ctrl-C, raised here: outside the bar, whose locks it may not hold

    def results(self, *, wait: bool = False, poll_interval: float = 2) -> dict[str, Any]:
        """The results as they stand (with `wait=True`, once the experiment has finished)."""
        if self.id is None:
            raise PlatformError(
                f"experiment {self.name!r} has not been submitted: call run() or run_async()"
            )
        client = current()
        if wait:
            while (
                client.request("GET", f"/experiments/{self.id}/progress")["status"] not in FINISHED
            ):
                time.sleep(poll_interval)
        body = client.request("GET", f"/experiments/{self.id}/results")
        rows = sorted(
            _pages(f"/experiments/{self.id}/rows", {}),
            key=lambda r: (r.get("cohort_position") or 0, r.get("position") or 0),
        )
        scores: dict[str, dict[str, Any]] = {}
        for line in body["summary"]:
            scores.setdefault(line["cohort"], {})[line["criterion"]] = {
                k: line[k] for k in ("mean", "n", "n_scored", "coverage", "ci95")
            }
        return {
            "id": body["id"],
            "name": body["name"],
            "status": body["status"],
            "error": body.get("error"),
            "dataset": body["dataset"],
            "judge_model": body["judge_model"],
            "cohorts": [c["name"] for c in body["cohorts"]],
            "criteria": body["criteria"],
            "summary": body["summary"],
            "scores": scores,
            "rows": [
                {k: v for k, v in r.items() if k not in ("trace_id", "cohort_position", "position")}
                for r in rows
            ],
            "progress": body["progress"],
        }

    def __repr__(self) -> str:
        return f"Experiment(name={self.name!r}, id={self.id!r})"


__all__ = ["Experiment"]
