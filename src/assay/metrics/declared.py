"""What a metric class declares by its code alone: the sample fields it reads, from the signature
of its `_ascore`, and the allowed values of its `Literal` parameters.

    @dataclass(kw_only=True)
    class Overlap(Metric):
        name: str = "overlap"
        case: Literal["exact", "folded"] = "exact"

        async def _ascore(self, *, response: str, reference: str, user_input: str | None = None):
            ...

reads `response` and `reference` (required: no default) and `user_input` (optional), and
`Overlap(case="Folded")` is refused naming the parameter and the allowed values. A class that
also spells out `required_fields`/`optional_fields` must agree with its signature; a class whose
`_ascore` takes `**fields` (its inputs depend on its configuration) declares them itself, per
class or per instance with `Metric.declare_fields`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from assay.metrics.base import Metric


def fields_from_signature(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(required, optional) sample fields named by `cls._ascore`'s keyword-only parameters, or
    None when it takes `**fields` or positional parameters besides `self`."""
    parameters = list(inspect.signature(cls.__dict__["_ascore"]).parameters.values())[1:]
    if not parameters or any(p.kind is not inspect.Parameter.KEYWORD_ONLY for p in parameters):
        return None
    required = tuple(p.name for p in parameters if p.default is inspect.Parameter.empty)
    optional = tuple(p.name for p in parameters if p.default is not inspect.Parameter.empty)
    return required, optional


def settle_fields(cls: type[Metric]) -> None:
    """Give `cls` the fields its `_ascore` signature names, or check the ones it spells out: each
    must be a parameter, and a parameter without a default must be required. (Spelling them out
    lets a class require a parameter that has a default for another kind of sample.)"""
    if "_ascore" not in cls.__dict__ or getattr(cls._ascore, "__isabstractmethod__", False):
        return
    derived = fields_from_signature(cls)
    if derived is None:
        return
    required, optional = derived
    if "required_fields" not in cls.__dict__ and "optional_fields" not in cls.__dict__:
        cls.required_fields, cls.optional_fields = required, optional
        return
    spelled_required = tuple(cls.__dict__.get("required_fields", required))
    spelled = set(spelled_required) | set(cls.__dict__.get("optional_fields", optional))
    unknown = sorted(spelled - set(required) - set(optional))
    unlisted = sorted(set(required) - set(spelled_required))
    if unknown or unlisted:
        problem = (
            f"declares {', '.join(unknown)} but its _ascore takes no such parameter"
            if unknown
            else f"makes {', '.join(unlisted)} optional but its _ascore has no default for it"
        )
        raise TypeError(
            f"{cls.__name__} {problem}: drop required_fields/optional_fields (the signature "
            "is enough) or make them agree"
        )


@functools.cache
def _literal_parameters(cls: type) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """(field name, allowed values) of each dataclass field of `cls` typed `Literal[...]` or
    `Literal[...] | None` (None then allowed too)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be resolved here: nothing to check
        return ()
    found = []
    for item in dataclasses.fields(cls):
        allowed = _allowed(hints.get(item.name))
        if allowed is not None:
            found.append((item.name, allowed))
    return tuple(found)


def _allowed(hint: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(hint)
    if origin is Literal:
        return typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        values: list[Any] = []
        for arm in typing.get_args(hint):
            if arm is type(None):
                values.append(None)
            elif typing.get_origin(arm) is Literal:
                values.extend(typing.get_args(arm))
            else:
                return None  # a Literal or something else: not a closed set
        return tuple(values)
    return None


def check_literal_parameters(metric: object) -> None:
    """Refuse a parameter outside its `Literal` values, naming the metric, parameter and choices."""
    from assay.errors import UsageError

    kind: type = type(metric)
    for name, allowed in _literal_parameters(kind):
        value = getattr(metric, name)
        # `True == 1`: a bool only matches a bool literal, and the other way round.
        if not any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in allowed):
            choices = ", ".join(repr(a) for a in allowed)
            raise UsageError(
                f"{type(metric).__name__}: {name} must be one of {choices}, got {value!r}"
            )


__all__ = ["check_literal_parameters", "fields_from_signature", "settle_fields"]
