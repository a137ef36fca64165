"""What an estimator takes as a column of data: a sequence or a numpy array. Each estimator
converts its columns with numpy before computing, so a caller holding arrays passes them as they
are. The names are for annotations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from numpy.typing import NDArray

Numbers: TypeAlias = Sequence[float] | NDArray[Any]  # scores, probabilities, values
Labels: TypeAlias = Sequence[int] | NDArray[Any]  # binary labels: 1 positive, 0 negative
Values: TypeAlias = Sequence[Any] | NDArray[Any]  # any column (categories, paired values)

__all__ = ["Labels", "Numbers", "Values"]
