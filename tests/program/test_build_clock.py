"""A build that would outlast its time limit stops at it: the large families of rows (per
period and scenario) and the hand-over to HiGHS look at the clock as they go, and a rebuild
with finer breakpoints is not started where the last build would not fit in the time left.

Deadlines here are set in the past or far ahead, so the outcome does not depend on the
machine's speed (benchmarks/time_limit.py measures how far past a limit a command ends).
"""

from __future__ import annotations

import math
import time

import pytest

from procure.errors import Reason, SolveError
from procure.ledger import load_ledger
from procure.ledger.periods import read_periods
from procure.program import from_ledger
from procure.program.model.build import build
from procure.program.model.highs import HighsModel
from procure.program.numbers.periods import period_problem
from procure.program.solve.program import Program


def _periods(count: int, tmp_path):
    ledger = load_ledger()
    path = tmp_path / "periods.csv"
    path.write_text("period,months,money_usd\n" + "".join(f"P{t},1,500\n" for t in range(count)))
    return period_problem(from_ledger(ledger, budget=500.0 * count), read_periods(path, ledger.sources))


def test_a_build_past_its_deadline_stops_with_the_time_limits_reason(tmp_path):
    with pytest.raises(SolveError, match="out of time: the time limit was reached while the model's") as caught:
        build(_periods(12, tmp_path), deadline=time.perf_counter() - 1.0)
    assert caught.value.reason is Reason.TIME_LIMIT


def test_a_hand_over_past_its_deadline_stops_with_the_time_limits_reason(tmp_path):
    built = build(_periods(12, tmp_path))
    with pytest.raises(SolveError, match="handed to HiGHS") as caught:
        HighsModel(built, time.perf_counter() - 1.0)
    assert caught.value.reason is Reason.TIME_LIMIT


def test_a_build_with_time_left_is_the_same_model(tmp_path):
    pp = _periods(6, tmp_path)
    timed, plain = build(pp, deadline=time.perf_counter() + 3600.0), build(pp)
    rows = [c.name for c in timed.model.component_objects(ctype=None) if hasattr(c, "name")]
    assert rows == [c.name for c in plain.model.component_objects(ctype=None) if hasattr(c, "name")]
    for name in ("budget_row", "capacity", "ahead"):
        a, b = getattr(timed.model, name), getattr(plain.model, name)
        assert list(a.keys()) == list(b.keys())
        assert [str(a[k].expr) for k in a] == [str(b[k].expr) for k in b]


def test_a_rebuild_that_would_outlast_the_time_left_is_not_started():
    program = Program(from_ledger(load_ledger(), budget=100_000))
    program.last_build_seconds = 10.0
    with pytest.raises(SolveError, match="would pass while the model is rebuilt") as caught:
        program.rebuild(deadline=time.perf_counter() + 1.0)
    assert caught.value.reason is Reason.TIME_LIMIT
    program.rebuild(deadline=math.inf)  # no deadline: rebuilt


def test_the_build_leaves_the_collectors_share_of_the_time_left(tmp_path, monkeypatch):
    # the objects of a build made with the collector paused are gone over once it runs again:
    # the build is given the time left over 1 + BUILD_COLLECT_SHARE, so that both end by the
    # deadline (benchmarks/time_limit.py measures the end of a command cut short so)
    import procure.program.solve.program as program

    seen = []

    def capture(*args, deadline=math.inf, **kwargs):
        seen.append((time.perf_counter(), deadline))
        return build(*args, deadline=deadline, **kwargs)

    monkeypatch.setattr(program, "build", capture)
    p = Program(_periods(4, tmp_path), time_limit=100.0)
    ((start, given),) = seen
    left = p.deadline - start
    assert given == pytest.approx(start + left / (1 + program.BUILD_COLLECT_SHARE), abs=0.05)
    assert given < p.deadline - 0.2 * left  # a share, not the whole time left
