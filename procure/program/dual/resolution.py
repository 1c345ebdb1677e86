"""How finely g can be read: a decrease below its float resolution is no decrease.

Pure functions, one problem or K at once, of :data:`STALL_RESOLUTION`.
"""

from __future__ import annotations

import numpy as np

#: g's float resolution, as a share of max(1, abs(g)) [1]: where the decrease Armijo asks of
#: the full Newton step is below it (at the optimum, to float precision), a step is taken where
#: g does not rise by more than it (g cannot show a decrease there).
STALL_RESOLUTION = 1e-15


def at_resolution(asked: np.ndarray | float, g: np.ndarray | float) -> np.ndarray:
    """True where the decrease ``asked`` of a full Newton step (Armijo's share of it) is ≥ 0 and
    within g's float resolution, :data:`STALL_RESOLUTION` of max(1, abs(g)) [own-hour equivalents]."""
    return (np.asarray(asked) >= 0) & (np.asarray(asked) <= STALL_RESOLUTION * np.maximum(1.0, np.abs(g)))


def within_resolution(g_new: np.ndarray | float, g: np.ndarray | float) -> np.ndarray:
    """True where ``g_new`` is no more than g's float resolution above ``g`` [own-hour equivalents]."""
    return np.asarray(g_new) <= np.asarray(g) + STALL_RESOLUTION * np.maximum(1.0, np.abs(g))
