"""Where HiGHS starts when the optimum is known: a primal and dual point of the model.

The dual-guided solve (:mod:`procure.program.solve.refine`) knows the optimum before HiGHS runs: the
exact hours ``x`` and the multipliers ``μ`` of the coupling rows (:mod:`procure.program.solve.polish`),
with every curve's tangent cut placed at ``x``. In the model that point is

* columns: the hours ``x``; each curve's credited value ``z_j = v_j(a_j (h0_j + x_j))``, which
  meets every cut of the curve (a tangent lies above a concave curve) and is tight at the cut
  placed at ``x``;
* row duals: ``μ`` on the budget, capacity and mix rows; on each curve's tightest cut the
  objective's weight of ``z_j`` (the cut carries the curve's value), 0 on its other cuts;
* column duals: the reduced costs ``c − Aᵀy``, read from the matrix HiGHS holds.

HiGHS's crossover takes such a point to a vertex, which the simplex proves optimal (usually in no
iteration): the bound is HiGHS's, as on any solve; the point only decides where it starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import highspy
import numpy as np

if TYPE_CHECKING:
    from .highs import HighsModel


def start_from(hm: HighsModel, x: np.ndarray, mu: np.ndarray) -> highspy.HighsSolution | None:
    """The model's point at hours ``x`` [h] and coupling multipliers ``mu`` (the budget row, each
    capacity with a row, each mix bound, in :func:`procure.program.rows.coupling_rows`'s order)
    [value per unit], for :meth:`procure.program.model.highs.HighsModel.solve`'s ``start``; None where
    the model is not one scenario's curves over the hours bought (its rows then have other names).
    """
    built = hm.built
    if not built.formulation.certain or len(hm.budget_rows) != 1:
        return None
    coupling = [hm.budget_rows[0], *(rows[0] for rows in hm.capacity_rows), *(rows[0] for rows in hm.mix_rows)]
    if len(coupling) != len(mu) or min(coupling, default=0) < 0 or not np.array_equal(hm.w_cols, hm.x_cols):
        return None
    lp = hm.h.getLp()
    ncol, nrow = int(lp.num_col_), int(lp.num_row_)
    cost, col = np.asarray(lp.col_cost_, dtype=float), np.zeros(ncol)
    col[hm.x_cols] = x
    _e, col[hm.z_cols] = built.arrays.value_of(np.asarray(x, dtype=float))
    # the matrix as HiGHS holds it now (column-wise or row-wise), one entry per nonzero
    matrix = lp.a_matrix_
    starts = np.asarray(matrix.start_, dtype=np.int64)
    inner = np.asarray(matrix.index_, dtype=np.int64)
    value = np.asarray(matrix.value_, dtype=float)
    if matrix.format_ == highspy.MatrixFormat.kRowwise:
        index, column_of = np.repeat(np.arange(nrow), np.diff(starts)), inner
    else:
        index, column_of = inner, np.repeat(np.arange(ncol), np.diff(starts))
    row_value = np.asarray(np.bincount(index, weights=value * col[column_of], minlength=nrow), dtype=float)
    row_dual = np.zeros(nrow)
    row_dual[coupling] = mu
    first_cut = nrow - hm.cut_rows
    if hm.cut_parts:
        curve = np.concatenate([c for c, _k, _r in hm.cut_parts])
        rhs = np.concatenate([r for _c, _k, r in hm.cut_parts])
        slack = rhs - row_value[first_cut:]
        # each curve's tightest cut: by curve, then by slack
        order = np.lexsort((slack, curve))
        tightest = order[np.r_[True, curve[order][1:] != curve[order][:-1]]]
        row_dual[first_cut + tightest] = cost[hm.z_cols][curve[tightest]]
    col_dual = cost - np.asarray(np.bincount(column_of, weights=value * row_dual[index], minlength=ncol), dtype=float)
    start = highspy.HighsSolution()
    start.col_value, start.row_value, start.col_dual, start.row_dual = col, row_value, col_dual, row_dual
    start.value_valid = start.dual_valid = True
    return start
