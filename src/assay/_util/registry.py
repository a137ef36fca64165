"""One way to extend assay: a registry of named things fed by built-ins, `register` and entry points.

Metrics (entry-point group `assay.metrics`), model providers (`assay.providers`) and dataset
backends (`assay.dataset_backends`) are each one `Registry`. A name is looked up in this order:

1. the built-ins, which cannot be replaced (a plugin must not silently change what
   `faithfulness` or `openai/...` means);
2. names given to `register(...)` in this process (tests, notebooks, an application's own code);
3. entry points of the installed distributions (`[project.entry-points."assay.metrics"]` in a
   plugin's pyproject), loaded on first use so an unused plugin costs nothing.

A built-in may be given as the object or as a `"module:attribute"` string imported on first use,
so optional dependencies (anthropic, litellm, llama.cpp) are imported only when asked for. Every
object is checked by the registry's `check` before it is handed out, and every failure (unknown
name, a plugin that fails to import, an object of the wrong type) is a `UsageError` naming it.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any, Generic, TypeVar

from assay.errors import UsageError

T = TypeVar("T")


def load_target(target: str) -> Any:
    """Import `"package.module:attribute"` (or a module given without an attribute)."""
    module, _, attribute = target.partition(":")
    loaded: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        loaded = getattr(loaded, part)
    return loaded


class Registry(Generic[T]):
    """Named objects of one kind (`what`, e.g. "dataset backend"), found as the module doc says.

    `builtins` maps a name to the object or its `"module:attribute"`; a callable returning such a
    mapping defers even that (the metric catalogue is discovered by importing `assay.metrics`).
    `check(obj)` returns the object to hand out or raises `TypeError` saying what it should be.
    `normalise` turns a user's spelling into the registry's key (e.g. lower case).
    """

    def __init__(
        self,
        what: str,
        group: str,
        *,
        builtins: Mapping[str, T | str] | Callable[[], Mapping[str, T | str]] | None = None,
        check: Callable[[Any], T],
        normalise: Callable[[str], str] = lambda name: name,
        list_hint: str = "",
    ) -> None:
        self.what = what
        self.group = group
        self._builtins_source = builtins or {}
        self._builtins: dict[str, T | str] | None = None
        self._loaded: dict[str, T] = {}
        self._registered: dict[str, T] = {}
        self._check = check
        self._normalise = normalise
        self._list_hint = list_hint

    # -- the three sources -------------------------------------------------------------------
    def builtins(self) -> dict[str, T | str]:
        if self._builtins is None:
            source = self._builtins_source
            mapping = source() if callable(source) else source
            self._builtins = dict(mapping)
        return self._builtins

    def entry_points(self) -> dict[str, metadata.EntryPoint]:
        """Installed entry points of the group, by name (read each time: installs can change)."""
        return {point.name: point for point in metadata.entry_points(group=self.group)}

    def register(self, name: str, obj: Any) -> None:
        """Make `obj` available as `name` in this process; a built-in name is refused."""
        key = self.key(name)
        if key in self.builtins():
            raise UsageError(f"{self.what} {key!r} is built in and cannot be replaced")
        self._registered[key] = self._checked(key, obj, origin="register")

    def unregister(self, name: str) -> None:
        """Forget a name given to `register` (tests use it to leave no trace)."""
        self._registered.pop(self.key(name), None)

    # -- lookup ------------------------------------------------------------------------------
    def key(self, name: Any) -> str:
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"a {self.what} name must be a non-empty string, got {name!r}")
        return self._normalise(name.strip())

    def names(self) -> list[str]:
        """Every name known now: built-ins in their order, then the others sorted."""
        builtin = list(self.builtins())
        others = (set(self._registered) | set(self.entry_points())) - set(builtin)
        return [*builtin, *sorted(others)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def find(self, name: str) -> T | None:
        """The object named `name`, or None if no source knows it."""
        key = self.key(name)
        if key in self._loaded:
            return self._loaded[key]
        builtin = self.builtins()
        if key in builtin:
            target = builtin[key]
            obj = self._checked(key, load_target(target) if isinstance(target, str) else target)
            self._loaded[key] = obj
            return obj
        if key in self._registered:
            return self._registered[key]
        point = self.entry_points().get(key)
        if point is None:
            return None
        try:
            loaded = point.load()
        except Exception as exc:  # a plugin's import error is the user's to see, with its cause
            raise UsageError(
                f"{self.what} {key!r} (entry point {point.value}) failed to load: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return self._checked(key, loaded, origin=f"entry point {point.value}")

    def get(self, name: str) -> T:
        """The object named `name`; an unknown name is a UsageError listing close matches."""
        found = self.find(name)
        if found is None:
            raise UsageError(self.unknown_message(self.key(name)))
        return found

    def unknown_message(self, key: str, extra: Iterable[str] = ()) -> str:
        known = [*self.names(), *extra]
        close = difflib.get_close_matches(key, known, n=3)
        if close:
            return f"unknown {self.what} {key!r}; did you mean {', '.join(close)}?"
        if self._list_hint:
            return f"unknown {self.what} {key!r}; {self._list_hint}"
        return f"unknown {self.what} {key!r}; known: {', '.join(known)}"

    def _checked(self, key: str, obj: Any, origin: str = "") -> T:
        try:
            return self._check(obj)
        except TypeError as exc:
            where = f" ({origin})" if origin else ""
            raise UsageError(f"{self.what} {key!r}{where}: {exc}") from None


__all__ = ["Registry", "load_target"]
