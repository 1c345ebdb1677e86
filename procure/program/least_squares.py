"""Least squares within a box, for the dual's steepest descent at a vertex of kinks.

At a vertex of linear sources' kinks (:mod:`procure.program.kinks`), g's subgradients are
``r − N y`` for the kinked sources' hours ``y`` in their boxes, and the least of them in norm
gives its steepest descent. NumPy has no bounded least squares (SciPy's ``lsq_linear``, the
tests' oracle, is not a dependency), so :func:`box_least_squares` solves it by active sets on
the handful of unknowns there are.
"""

from __future__ import annotations

import numpy as np

from ..arrays import DIVISION_FLOOR

#: Hours may leave a box by this share of it (float noise) and count as at its end [1]: here, and
#: for a kinked source's hours from :func:`procure.program.kinks.kink_step`, which refuses the
#: step beyond it and clips them to the box.
BOX_SLACK = 1e-9
#: :func:`box_least_squares` frees a variable where that lowers the squared residual's slope by
#: more than this share of ``max|N| · max|r|`` [1] (float noise below) ...
BOX_LS_RELEASE = 1e-12
#: ... in at most this many changes of its free set (each is a least-squares solve of at most as
#: many unknowns as kinked sources).
BOX_LS_CHANGES = 50


def box_least_squares(N: np.ndarray, r: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
    """``y`` minimising ``‖r − N y‖`` within the box ``0 ≤ y ≤ upper`` (bounded-variable least
    squares by active sets, Stark and Parker 1995): from every ``y`` at 0, the variable whose
    release lowers the residual most is freed; the free ones are solved by least squares, and
    where that solution leaves the box the step to it stops where the first one reaches an end,
    which is held there. None where a least-squares solve fails or :data:`BOX_LS_CHANGES` changes
    do not settle.

    Parameters
    ----------
    N : numpy.ndarray
        rows × k.
    r : numpy.ndarray
        rows.
    upper : numpy.ndarray
        k ends, > 0 (inf for none).
    """
    k = N.shape[1]
    y = np.zeros(k)
    state = np.zeros(k, dtype=np.int8)  # 0 at 0, 1 free, 2 at its upper end
    scale = max(float(np.max(np.abs(N), initial=0.0)) * float(np.max(np.abs(r), initial=0.0)), DIVISION_FLOOR)
    for _change in range(BOX_LS_CHANGES):
        w = N.T @ (r - N @ y)  # lowers the residual where y rises (w > 0) or falls (w < 0)
        gain = np.where(state == 0, w, np.where(state == 2, -w, 0.0))
        j = int(np.argmax(gain))
        if not gain[j] > BOX_LS_RELEASE * scale:
            return y
        state[j] = 1
        for _hold in range(k + 1):
            free = state == 1
            fixed = np.where(state == 2, upper, 0.0)
            fixed[free] = 0.0
            try:
                z_free = np.linalg.lstsq(N[:, free], r - N @ fixed, rcond=None)[0]
            except np.linalg.LinAlgError:  # no least-squares solution (SVD fails)
                return None
            z = fixed.copy()
            z[free] = z_free
            inside = (z_free > 0) & (z_free < upper[free])
            if inside.all():
                y = z
                break
            # step from y towards z as far as the box allows; the free ones at an end are held there
            y_free, u_free = y[free], upper[free]
            with np.errstate(divide="ignore", invalid="ignore"):
                to_end = np.where(z_free >= u_free, (u_free - y_free) / (z_free - y_free), 1.0)
                t_free = np.where(z_free <= 0, y_free / (y_free - z_free), to_end)
            t = float(np.clip(np.min(np.nan_to_num(t_free, nan=0.0)), 0.0, 1.0))
            y = y + t * (z - y)
            idx = np.flatnonzero(free)
            size = np.where(np.isfinite(upper[idx]), np.maximum(1.0, upper[idx]), 1.0)
            low = idx[y[idx] <= BOX_SLACK * size]
            high = idx[np.isfinite(upper[idx]) & (y[idx] >= upper[idx] * (1 - BOX_SLACK))]
            state[low], y[low] = 0, 0.0
            state[high], y[high] = 2, upper[high]
            if not (len(low) or len(high)):
                return None
        else:
            return None
    return None
