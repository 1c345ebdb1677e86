"""The prices at the dual's minimum where g is flat: the top of the flat stretch.

A shadow price is the value of one more unit, so it is read at the stretch's high end; see
``docs/certification.md``, "λ and shadow prices: no bound shares a limit's price".
"""

from __future__ import annotations

import numpy as np

#: Relative distance from its box within which a source counts as at it [1]: ten times
#: HiGHS's primal feasibility tolerance, relative to the box.
AT_BOX = 1e-6
#: Relative difference within which a source's box is taken as a capacity's room [1].
SAME_BOX = 1e-12


def with_box_duals(mu: np.ndarray, A: np.ndarray, b: np.ndarray, rows: range, x: np.ndarray, box: np.ndarray,
                   slope: np.ndarray) -> np.ndarray:  # fmt: skip
    """The multipliers of the dual's minimum, those of ``rows`` (capacities) raised to the top
    of their flat stretch: over the sources at a box of row ``r``, by
    Σ (v'_s − (Aᵀμ)_s) · box_s / b_r.

    Parameters
    ----------
    mu : numpy.ndarray
        The dual's multipliers, one per coupling row [value per unit].
    A, b : numpy.ndarray
        The coupling rows and their right-hand sides (held hours counted).
    rows : range
        The rows whose limit gives boxes (the capacities).
    x, box, slope : numpy.ndarray
        Each source's hours [h], box [h] and marginal value at its hours [value per h].

    Returns
    -------
    numpy.ndarray
        The multipliers, those of ``rows`` raised where a box of theirs holds a source.
    """
    out = np.array(mu, dtype=float)
    reduced = np.maximum(slope - A.T @ mu, 0.0)
    at = np.isfinite(box) & (box > 0) & (x >= box * (1 - AT_BOX))
    for r in rows:
        # a box that is the capacity's, ``b_r / A_rs`` (equal to the float rounding of the division)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(A[r] > 0, float(b[r]) / A[r], np.inf)
        mine = at & (A[r] > 0) & (np.abs(box - room) <= SAME_BOX * np.abs(room))
        if mine.any() and b[r] > 0:
            out[r] += float(np.sum(reduced[mine] * box[mine]) / b[r])
    return out
