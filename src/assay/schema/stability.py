"""How stable a judge was on a run whose cells were asked several times (`repeats=N`).

Per metric: how many cells were asked again, the share whose decision held on every asking (a
fraction of them flipped), and the mean spread of their scores. Cells asked once, skipped or
failed are not counted, and `cells` says how many were.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from assay.schema.outcome import Ok, Outcome


@dataclass(frozen=True)
class Stability:
    metric: str
    cells: int  # cells asked more than once that gave a value
    unanimous: int  # of those, cells whose decision was the same on every asking
    mean_spread: float | None  # mean of the cells' standard deviations (numbers only)

    @property
    def share_unanimous(self) -> float | None:
        return self.unanimous / self.cells if self.cells else None

    @property
    def flipped(self) -> int:
        return self.cells - self.unanimous

    def line(self) -> str:
        if not self.cells:
            return f"{self.metric}: no cell asked more than once"
        spread = f", mean spread {self.mean_spread:.3f}" if self.mean_spread is not None else ""
        return (
            f"{self.metric}: {self.unanimous} of {self.cells} cells unanimous "
            f"({self.flipped} flipped){spread}"
        )


def stability_of(metric: str, outcomes: Iterable[Outcome]) -> Stability:
    repeated = [o.repeats for o in outcomes if isinstance(o, Ok) and o.repeats is not None]
    spreads = [r.spread for r in repeated if r.spread is not None]
    return Stability(
        metric=metric,
        cells=len(repeated),
        unanimous=sum(r.unanimous for r in repeated),
        mean_spread=statistics.fmean(spreads) if spreads else None,
    )


__all__ = ["Stability", "stability_of"]
