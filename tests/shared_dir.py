"""Where the workplace's shared folder is: data and the specification are read in place there,
never copied into the repository. Looked for, in order: an environment variable the caller names;
../shared beside this repository; and, for a local clone (`git clone /path/to/assay`), the same
place beside the repository it was cloned from."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def _origin_parent() -> Path | None:
    """The folder holding the repository this one was cloned from, when that is a local path."""
    try:
        url = subprocess.run(
            ["git", "config", "--get", "remote.origin.url"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    origin = Path(url.removeprefix("file://"))
    return origin.resolve().parent if url and origin.is_absolute() and origin.is_dir() else None


def candidates(relative: Path, env_var: str) -> list[Path]:
    """The places `shared/<relative>` may be, the env var's value first."""
    found = [Path(os.environ[env_var])] if os.environ.get(env_var) else []
    found.append(REPO_ROOT.parent / "shared" / relative)
    origin = _origin_parent()
    if origin is not None:
        found.append(origin / "shared" / relative)
    return found
