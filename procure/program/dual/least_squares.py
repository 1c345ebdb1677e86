"""Least squares within a box, for the dual's steepest descent at a vertex of kinks.

At a vertex of kinks the least in norm of g's subgradients (:mod:`procure.program.dual.kinks`),
``r − N y`` over the kinked sources' hours ``y``, gives its steepest descent. NumPy has no bounded
least squares (SciPy's ``lsq_linear``, the tests' oracle, is not a dependency), so
:func:`box_least_squares` solves it by active sets on the handful of unknowns there are.
"""

from __future__ import annotations

import numpy as np

from ...arrays import DIVISION_FLOOR

#: Hours may leave a box by this share of it (float noise) and count as at its end [1]: here, and
#: for a kinked source's hours from :func:`procure.program.dual.kink_step.kink_step`, which refuses the
#: step beyond it and clips them to the box.
BOX_SLACK = 1e-9
#: :func:`box_least_squares` frees a variable where that lowers the squared residual's slope by
#: more than this share of ``‖N_j‖ · ‖r‖`` (its column's norm and the right-hand side's) [1]
#: (float noise below) ...
BOX_LS_RELEASE = 1e-12
#: ... in at most this many changes of its free set (each is a least-squares solve of at most as
#: many unknowns as kinked sources).
BOX_LS_CHANGES = 50


def box_least_squares(N: np.ndarray, r: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
    """``y`` minimising ``‖r − N y‖`` within the box ``0 ≤ y ≤ upper`` (bounded-variable least
    squares by active sets, Stark and Parker 1995): from every ``y`` at 0, the variable whose
    release lowers the residual most for its column's size is freed; the free ones are solved by
    least squares, and where that solution leaves the box the step to it stops where the first
    one reaches an end, which is held there; a variable freed and held straight back, with ``y``
    unmoved, is not freed again until ``y`` moves. None where a least-squares solve fails or
    :data:`BOX_LS_CHANGES` changes do not settle.

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
    # each variable's slope against its own column's scale (columns may differ by many orders)
    scale = np.maximum(np.linalg.norm(N, axis=0) * float(np.linalg.norm(r)), DIVISION_FLOOR)
    blocked = np.zeros(k, dtype=bool)  # freed and held straight back, y unmoved: not again until y moves
    for _change in range(BOX_LS_CHANGES):
        w = N.T @ (r - N @ y)  # lowers the residual where y rises (w > 0) or falls (w < 0)
        gain = np.where(state == 0, w, np.where(state == 2, -w, 0.0))
        gain[blocked] = -np.inf
        j = int(np.argmax(gain / scale))
        if not gain[j] > BOX_LS_RELEASE * scale[j]:
            return y
        state[j] = 1
        before = y.copy()
        for _hold in range(k + 1):
            free = state == 1
            fixed = np.where(state == 2, upper, 0.0)
            try:
                # on columns scaled to unit norm, then back: columns may differ by many orders
                norms = np.maximum(np.linalg.norm(N[:, free], axis=0), DIVISION_FLOOR)
                z_free = np.linalg.lstsq(N[:, free] / norms, r - N @ fixed, rcond=None)[0] / norms
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
        if np.array_equal(y, before) and state[j] != 1:
            blocked[j] = True
        else:
            blocked[:] = False
    return None
