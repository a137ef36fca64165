"""`Experiment`: cohorts × dataset × criteria, run on the server (stage 2 of issue #16)."""

from __future__ import annotations

from typing import Any

from assay.platform.sdk.errors import PlatformError


class Experiment:
    def __init__(self, name: str, dataset: Any, task: Any, cohorts: Any, criteria: Any, judge_model: str) -> None:
        self.name, self.dataset, self.task = name, dataset, task
        self.cohorts, self.criteria, self.judge_model = cohorts, criteria, judge_model

    def run(self, poll_interval: float = 2) -> dict[str, Any]:
        raise PlatformError("experiments are not available on this server yet")


__all__ = ["Experiment"]
