"""HiGHS in this process: a new ``Highs`` object set up as the hand-over uses it, and the
solver's own output kept off the terminal (shown with ``PROCURE_TRACEBACK``).
"""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import highspy
import numpy as np
from pyomo.common.tee import capture_output

#: Environment variable that shows the solver's own output (and tracebacks).
SHOW_SOLVER_OUTPUT = "PROCURE_TRACEBACK"
INF = highspy.kHighsInf
#: HiGHS's default LP method: the dual simplex (warm from a basis where one exists).
SIMPLEX = "choose"
#: Whether HiGHS runs its feasibility-jump heuristic before the root of a MIP. Off: the model's
#: MIPs start from a feasible point (no hours) and their integers are on/off and whole-lot
#: choices, where the heuristic found nothing the root's own did not, and took 5 of the 8 ms of
#: a choice of formats at one cores count; off, 1,000 sources half S-shaped solve in 6.7 s
#: against 7.2 s, and 1,000 sources a tenth with lots, fees or hills in 1.12 s against 1.27 s,
#: to the same plans (medians of 3).
FEASIBILITY_JUMP = False
#: The least time a solve is given, however little is left of its deadline [s]: HiGHS then
#: stops at once with its status "time", which the caller reports.
LEAST_TIME_LIMIT = 1e-3


#: One capture of the process's output at a time: the capture redirects the process's own file
#: descriptors, so two threads capturing at once would tangle them.
_CAPTURE = threading.RLock()


@contextmanager
def quiet_solver() -> Iterator[None]:
    """Capture what the solver writes to the process's standard output and error, one thread
    at a time (the capture redirects the process's own file descriptors).

    Shown on standard error when :data:`SHOW_SOLVER_OUTPUT` is set; dropped otherwise.
    """
    buffer = io.StringIO()
    try:
        with _CAPTURE, capture_output(buffer, capture_fd=True):
            yield
    finally:
        text = buffer.getvalue()
        if text and os.environ.get(SHOW_SOLVER_OUTPUT):
            sys.stderr.write(text)


def _verbose() -> bool:
    return bool(os.environ.get(SHOW_SOLVER_OUTPUT))


def solver_streams() -> AbstractContextManager[None]:
    """Around a call into HiGHS: with ``output_flag`` off it prints nothing, so nothing to
    capture (the capture costs a thread hand-off a call); with the log asked for, the log goes
    to standard error, never standard output."""
    return quiet_solver() if _verbose() else nullcontext()


#: Per thread: whether a ``Highs`` object has run in it (see :func:`crossover_ready`).
_RUN_HERE = threading.local()


def crossover_ready() -> None:
    """Run a one-row LP once in this thread before its first crossover: HiGHS 1.16's
    ``crossover`` reads per-thread state that the first ``run`` of a ``Highs`` object in the
    thread sets up, and crashes the process without it."""
    if getattr(_RUN_HERE, "done", False):
        return
    h = new_highs()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 1, 1
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.ones(1), np.zeros(1), np.ones(1)
    lp.row_lower_, lp.row_upper_ = np.full(1, -INF), np.ones(1)
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = np.array([0, 1]), np.array([0]), np.ones(1)
    with solver_streams():
        h.passModel(lp)
        h.run()
    _RUN_HERE.done = True


def new_highs() -> highspy.Highs:
    with quiet_solver():  # its constructor prints a banner whatever the options
        h = highspy.Highs()
    h.setOptionValue("output_flag", _verbose())
    h.setOptionValue("log_to_console", _verbose())
    h.setOptionValue("mip_heuristic_run_feasibility_jump", FEASIBILITY_JUMP)
    return h
