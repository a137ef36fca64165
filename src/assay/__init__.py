"""assay: measure how good LLM, RAG and agent applications are.

The public surface is re-exported here; everything else is an implementation detail.
"""

import os as _os
import types as _types
from pathlib import Path as _Path
from typing import Any as _Any

import assay.compat.ragas as _compat_ragas
import assay.quickstart as _quickstart_module
from assay._version import __version__
from assay.compat.ragas.cache import CacheInterface, DiskCacheBackend, cacher
from assay.compat.ragas.tokenizers import (  # Ragas exports these from its top level too
    BaseTokenizer,
    HuggingFaceTokenizer,
    TiktokenWrapper,
    get_default_tokenizer,
    get_tokenizer,
)
from assay.engine import (
    ExceptionInRunner,
    Executor,
    RunConfig,
    aevaluate,
    evaluate,
    set_logging_level,
)
from assay.errors import (
    AssayError,
    CheckpointMismatch,
    DataError,
    MetricError,
    MissingDependency,
    ModelError,
    NotApplicable,
    RunFailed,
    UsageError,
)
from assay.evaluator import RAGEvaluator
from assay.experiments import Dataset, experiment
from assay.metrics import *  # noqa: F403
from assay.metrics import __all__ as _metrics_all
from assay.models import embedding_factory, llm_factory
from assay.schema import *  # noqa: F403
from assay.schema import __all__ as _schema_all

# Ragas' spellings on the assay modules and metric classes Ragas code reaches (assay.compat.ragas).
_compat_ragas.install()


class _CallableQuickstart(_types.ModuleType):
    """`assay.quickstart` is the template package and, as Ragas' `quickstart`, a function:
    `quickstart()` gives the templates, `quickstart("rag_eval", output_dir=".")` creates
    `./rag_eval` from that template and returns its path."""

    def __call__(
        self, template: str | None = None, output_dir: str | _os.PathLike[str] = "."
    ) -> _Any:
        if template is None:
            return dict(self.TEMPLATES)
        return self.create_project(template, _Path(output_dir) / template)


_quickstart_module.__class__ = _CallableQuickstart
quickstart = _quickstart_module


def judge_card(metric: _Any, llm: _Any = None) -> _Any:
    """The reliability card of `metric` (an instance or id) with `llm` (None: the default judge):
    agreement with people measured by `assay benchmark`, stability, and what is unmeasured; None
    when nothing was measured for this configuration and judge (see `assay.benchmark.cards`)."""
    from assay.benchmark.cards import judge_card as _judge_card

    return _judge_card(metric, llm)


def replay(recording: _Any, agent: _Any, **options: _Any) -> _Any:
    """Run `agent` (a factory: `agent(tools=..., model=..., system_prompt=...)`) again on a
    recorded trace, session or `MultiTurnSample`, every tool call answered from the recording;
    a `ReplayResult` with both trajectories, their diff and scores (`assay.simulation.replay`)."""
    from assay.simulation.replay import replay as _replay

    return _replay(recording, agent, **options)


__all__ = [
    "AssayError",
    "CheckpointMismatch",
    "DataError",
    "Dataset",
    "ExceptionInRunner",
    "Executor",
    "MetricError",
    "MissingDependency",
    "ModelError",
    "NotApplicable",
    "RAGEvaluator",
    "RunConfig",
    "RunFailed",
    "UsageError",
    "__version__",
    "aevaluate",
    "evaluate",
    "experiment",
    "judge_card",
    "quickstart",
    "replay",
    "set_logging_level",
    # models (Ragas' top-level names)
    "BaseTokenizer",
    "CacheInterface",
    "DiskCacheBackend",
    "HuggingFaceTokenizer",
    "TiktokenWrapper",
    "cacher",
    "embedding_factory",
    "get_default_tokenizer",
    "get_tokenizer",
    "llm_factory",
    *_metrics_all,
    *_schema_all,
]
