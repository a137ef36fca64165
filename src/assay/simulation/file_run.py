"""A simulation from a scenario file to a conversations file: what `assay simulate` calls.

`simulate_file` finds the agent (`load_agent`: "module:function", "path/to/file.py:function" or an
http(s) URL), builds the models the command line names, checks the output path, runs `simulate`
and writes the finished conversations as evaluation rows (JSON Lines, atomically), ready for
`assay evaluate`. Everything is checked before the first model call.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.engine.model_choice import ModelChoice
from assay.errors import UsageError
from assay.simulation.http_agent import HttpAgent
from assay.simulation.result import SimulationResult
from assay.simulation.run import SimulationEstimate, simulate


def load_agent(spec: str) -> Any:
    """The agent a command line names: an http(s) URL (an `HttpAgent`), "module:attribute"
    (imported with the working directory on the path) or "path/to/file.py:attribute"."""
    if spec.startswith(("http://", "https://")):
        return HttpAgent(spec)
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise UsageError(
            f"--agent {spec!r}: give module:function, path/to/file.py:function or an http(s) URL"
        )
    try:
        if module_name.endswith(".py"):
            module = _from_file(Path(module_name), spec)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.insert(0, str(Path.cwd()))
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(
            f"--agent {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
    found = getattr(module, attribute, None)
    if found is None:
        raise UsageError(f"--agent {spec!r}: {module_name} has no attribute {attribute!r}")
    return found


def _from_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise UsageError(f"--agent {spec!r}: no file {path}")
    name = f"assay_agent_{path.stem}"
    loader = importlib.util.spec_from_file_location(name, path)
    if loader is None or loader.loader is None:
        raise UsageError(f"--agent {spec!r}: {path} cannot be imported")
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module
    loader.loader.exec_module(module)
    return module


def _check_output(output: Path | None) -> None:
    if output is None:
        return
    if output.is_dir():
        raise UsageError(f"--output {output} is a directory; give a .jsonl file")
    if not output.parent.exists():
        raise UsageError(f"--output {output}: the directory {output.parent} does not exist")


@dataclass(frozen=True)
class SimulateFileOptions:
    """What `assay simulate` passes on, named as its options are."""

    output: Path | None = None
    user_llm: str | None = None
    judge_llm: str | None = None
    base_url: str | None = None
    cache: bool = True
    max_turns: int = 10
    concurrency: int = 4
    run_dir: Path | None = None
    budget: float | None = None
    loop_limit: int | None = 3
    agent_timeout: float | None = 300.0
    language: str = "english"
    show_progress: bool = True


def simulate_file(
    scenarios: Path, agent: str, options: SimulateFileOptions, *, estimate: bool = False
) -> SimulationResult | SimulationEstimate:
    """Simulate every scenario of the file with the agent `agent` names; write the finished
    conversations to `options.output` (when given). With `estimate`, only the forecast."""
    _check_output(options.output)
    found = load_agent(agent)
    user = ModelChoice(llm=options.user_llm, base_url=options.base_url, cache=options.cache)
    judge = ModelChoice(llm=options.judge_llm, base_url=options.base_url, cache=options.cache)
    user_llm = user.llm_for(needed=True)
    result = simulate(
        found,
        scenarios,
        user_llm=user_llm,
        max_turns=options.max_turns,
        judge_llm=judge.named_llm() or user_llm,
        concurrency=options.concurrency,
        run_dir=options.run_dir,
        show_progress=options.show_progress,
        budget=options.budget,
        estimate=estimate,
        loop_limit=options.loop_limit,
        agent_timeout=options.agent_timeout,
        language=options.language,
    )
    if isinstance(result, SimulationResult) and options.output is not None:
        result.to_jsonl(options.output)
    return result


__all__ = ["SimulateFileOptions", "load_agent", "simulate_file"]
