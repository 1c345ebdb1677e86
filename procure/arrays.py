"""Array conventions shared by every wing: what a vectorised formula takes and gives back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: A scalar, a numpy array or a pandas Series; formulas return the shape of the broadcast inputs.
ArrayLike = Any

#: The least a divisor that may be 0 is taken to be, so that a quotient stays finite: far below
#: any quantity of the program in its units (hours, dollars, multipliers, value) [1].
DIVISION_FLOOR = 1e-300


def like(values: Any, *inputs: ArrayLike) -> ArrayLike:
    """Return ``values`` as a Series if any input was one, a scalar if all were scalars.

    Parameters
    ----------
    values : array_like
        The computed result, broadcast to the inputs' shape.
    *inputs : array_like
        The arguments the result was computed from.
    """
    for item in inputs:
        if isinstance(item, pd.Series):
            return pd.Series(np.broadcast_to(values, item.shape), index=item.index)
    if np.ndim(values) == 0:
        return values.item() if isinstance(values, np.ndarray | np.generic) else values
    return values
