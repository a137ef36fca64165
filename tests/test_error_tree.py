"""The drawing in `assay/errors.py` is the exception tree the code defines: every `AssayError`
subclass is drawn once, under its first `AssayError` base, with the module it lives in; every
other exception class assay defines is named in the docstring's "Not in the tree" paragraph."""

from __future__ import annotations

import importlib
import pkgutil
import re

import assay
import assay.errors
from assay.errors import AssayError

_LINE = re.compile(r"^    (?P<prefix>[│├└─ ]*)(?P<name>[A-Z]\w+)(?:\s+\((?P<module>[\w.]+)\))?")


def _import_everything() -> None:
    for found in pkgutil.walk_packages(assay.__path__, "assay."):
        name = found.name
        if ".templates" in name or ".migrations" in name or name.startswith("assay.__main__"):
            continue
        try:
            importlib.import_module(name)
        except ImportError:  # the integrations assay does not provide refuse on import
            continue


def drawn_tree() -> dict[str, tuple[str | None, str]]:
    """name@module -> (parent name@module, module) as the docstring draws them."""
    lines = assay.errors.__doc__.split("\n\n")[1].splitlines()
    stack: list[str] = []
    drawn: dict[str, tuple[str | None, str]] = {}
    for line in lines:
        match = _LINE.match(line)
        assert match, f"a line of the drawing does not parse: {line!r}"
        depth = len(match["prefix"]) // 4
        module = "assay." + (match["module"] or "errors")
        key = f"{match['name']}@{module}"
        del stack[depth:]
        drawn[key] = (stack[-1] if stack else None, module)
        stack.append(key)
    return drawn


def _key(cls: type, drawn: dict[str, tuple[str | None, str]]) -> str:
    for key, (_parent, module) in drawn.items():
        if key.split("@")[0] == cls.__name__ and cls.__module__.startswith(module):
            return key
    return f"{cls.__name__}@{cls.__module__}"


def _all_subclasses(root: type) -> set[type]:
    found, todo = set(), [root]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def test_the_drawing_is_the_tree_the_code_defines():
    _import_everything()
    drawn = drawn_tree()
    actual = {}
    for cls in _all_subclasses(AssayError):
        if not cls.__module__.startswith("assay.") or "tests" in cls.__module__:
            continue
        parent = next(base for base in cls.__mro__[1:] if issubclass(base, AssayError))
        actual[_key(cls, drawn)] = _key(parent, drawn)
    expected = {key: parent for key, (parent, _module) in drawn.items() if parent is not None}
    assert actual == expected


def test_every_other_exception_class_is_named_as_outside_the_tree():
    _import_everything()
    outside = assay.errors.__doc__.split("Not in the tree")[1].split("\n\n")[0]
    missing = sorted(
        cls.__name__
        for cls in _all_subclasses(Exception)
        if cls.__module__.startswith("assay.")
        and not issubclass(cls, AssayError)
        and not issubclass(cls, Warning)
        and f"`{cls.__name__}`" not in outside
    )
    assert not missing, f"exception classes neither in the tree nor named outside it: {missing}"


def test_one_except_catches_every_rate_limit():
    from assay.platform.sdk import RateLimited as PlatformRateLimited

    refused = PlatformRateLimited("over the limit", retry_after=1.5)
    try:
        raise refused
    except assay.errors.RateLimited as caught:  # the model layer's name catches the SDK's 429
        assert caught.retry_after == 1.5 and caught.status == 429


def test_an_exception_becomes_one_kind_of_outcome():
    from assay.schema.outcome import Error

    try:
        group_class = ExceptionGroup  # a builtin from Python 3.11
    except NameError:  # Python 3.10: anyio's backport
        from exceptiongroup import ExceptionGroup as group_class

    failure = assay.errors.OutputParseError("no JSON", raw="{oops")
    failure.attempts = 3
    outcome = Error.from_exception(group_class("judges", [failure, ValueError("later")]))
    assert (outcome.error_type, outcome.message, outcome.attempts, outcome.raw) == (
        "OutputParseError",
        "no JSON",
        3,
        "{oops",
    )
    assert Error.from_exception(KeyError()).message == "KeyError()"
