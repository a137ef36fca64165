"""The source of a score uploaded from an `EvaluationResult` (`upload_result`), written by the SDK
and read by the server's trust panel: which run it came from, and which judge scored the metric
in which configuration, so the platform can show that judge's reliability card.

    assay:<run id>;config=<digest>;judge=<identity as JSON>     a metric scored by a judge
    assay:<run id>;judge=none                                   a metric that asks no judge
    assay:<run id>                                              uploaded before judges were named

The identity is the one the library's cards are keyed by (`LLM.identity()`, e.g. the embedded
judge's `{"provider": "local", "model": "<file>.gguf", "bytes": ...}`), taken from the run's
`metric_specs`; the digest is a hash of the metric's parameters and prompt hashes as
`assay.benchmark.cards.configuration` normalises them, so a card measured for another
configuration of the metric is never shown for it. The judge comes last: it is JSON and may hold
any character. A source longer than the server takes (`SOURCE_MAX`) drops the judge, and then
says nothing about it rather than something cut short.

Only the standard library here: the SDK imports it, and the SDK imports nothing of the server.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

PREFIX = "assay:"
SOURCE_MAX = 900  # as the score route's `source`
NO_JUDGE = "none"


def configuration_digest(params: Any, prompts: dict[str, str]) -> str:
    """A short hash of a metric's parameters and {prompt id: prompt hash}, each as the cards
    compare them (parameters through JSON with sorted keys, anything else as its string)."""
    normal = json.loads(json.dumps(params or {}, sort_keys=True, default=str))
    text = json.dumps({"params": normal, "prompts": dict(sorted(prompts.items()))}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def spec_configuration(spec: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """(parameters, {prompt id: hash}) of a metric as a run recorded it (`Metric.spec()`)."""
    prompts = {
        str(p["id"]): str(p["hash"])
        for p in spec.get("prompts") or []
        if isinstance(p, dict) and "id" in p and "hash" in p
    }
    return spec.get("params") or {}, prompts


def upload_source(run_id: str, spec: dict[str, Any] | None) -> str:
    """The source of an uploaded score of the metric `spec` (None: the run did not record it)."""
    base = f"{PREFIX}{run_id}"
    if spec is None:
        return base
    judge = spec.get("llm")
    if not isinstance(judge, dict):
        return f"{base};judge={NO_JUDGE}"
    digest = configuration_digest(*spec_configuration(spec))
    full = f"{base};config={digest};judge={json.dumps(judge, sort_keys=True, default=str)}"
    return full if len(full) <= SOURCE_MAX else base


@dataclass(frozen=True)
class UploadedJudge:
    """What an uploaded score's source says: its run, and the judge (None: not named; `{}` with
    `no_judge`: the metric asks no judge) with the configuration digest it scored."""

    run_id: str
    identity: dict[str, Any] | None = None
    config: str | None = None
    no_judge: bool = False


def read_upload_source(given: str) -> UploadedJudge | None:
    """Read a source written by `upload_source` (as sent, without the server's `key:<id>:`);
    None for any other source."""
    if not given.startswith(PREFIX):
        return None
    head, _, judge = given[len(PREFIX) :].partition(";judge=")
    run_id, *fields = head.split(";")
    config = next((f[len("config=") :] for f in fields if f.startswith("config=")), None)
    if not judge:
        return UploadedJudge(run_id)
    if judge == NO_JUDGE:
        return UploadedJudge(run_id, no_judge=True)
    try:
        identity = json.loads(judge)
    except ValueError:
        return UploadedJudge(run_id)
    if not isinstance(identity, dict) or not identity:
        return UploadedJudge(run_id)
    return UploadedJudge(run_id, identity, config)


__all__ = [
    "NO_JUDGE",
    "UploadedJudge",
    "configuration_digest",
    "read_upload_source",
    "spec_configuration",
    "upload_source",
]
