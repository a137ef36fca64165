"""The two consoles every command prints to: results on stdout, progress and errors on stderr.

Kept apart from `app.py` (which imports every command) so that a command can import them at
module level without an import cycle.
"""

from __future__ import annotations

from rich.console import Console

stdout = Console()
stderr = Console(stderr=True)

__all__ = ["stderr", "stdout"]
