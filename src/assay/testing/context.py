"""What the pytest plugin tells the assertion helpers about the test running now.

Outside a pytest session with the plugin active there is no context, and `assert_scores` and
`assert_case` use their own defaults and record nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TestContext:
    nodeid: str
    defaults: dict[str, Any] = field(default_factory=dict)  # from options and the marker
    baseline: dict[str, Any] | None = None  # this test's entry of the --assay-baseline report
    checks: list[dict[str, Any]] = field(default_factory=list)  # what the helpers decided

    __test__ = False  # not a pytest test class


_current: TestContext | None = None


def current() -> TestContext | None:
    return _current


def set_current(context: TestContext | None) -> None:
    global _current
    _current = context


def default(name: str, given: Any, fallback: Any) -> Any:
    """The argument given, else the plugin's default for this test, else the helper's own."""
    if given is not None:
        return given
    context = _current
    if context is not None and context.defaults.get(name) is not None:
        return context.defaults[name]
    return fallback


__all__ = ["TestContext", "current", "default", "set_current"]
