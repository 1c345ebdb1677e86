"""The time limit bounds every solve of a request, from the start of its solve: the plan, EVPI's
per-scenario solves, VSS's mean-scenario plan and the byte-price range; out of time, one line
that says what was finished."""

from __future__ import annotations

import time

import pytest

from procure.analyses import scale, sensitivity, solving, uncertainty
from procure.analyses.scale import Deadline
from procure.defaults import TIME_LIMIT_MARGIN
from procure.errors import InputError, Reason, SolveError
from procure.interfaces.cli import main
from procure.ledger import load_ledger
from procure.program import from_ledger

LEDGER = load_ledger()
#: Seconds each chunk of EVPI is slowed by in the tests that need the plan to finish in time
#: and EVPI not [s].
SLOW_CHUNK = 1.0


def _slowed(real):
    def slow(options, problems):
        time.sleep(SLOW_CHUNK)
        return real(options, problems)

    return slow


def test_evpi_stops_at_the_deadline_and_says_what_was_finished(monkeypatch):
    monkeypatch.setattr(uncertainty, "wait_and_see_chunk", _slowed(uncertainty.wait_and_see_chunk))
    monkeypatch.setattr(uncertainty, "SCENARIO_CELLS_PER_CHUNK", 10 * LEDGER.sources.shape[0])  # 10 a chunk
    request = solving.prepare(budget=100_000, samples=50, time_limit=2.5, workers=1)  # 5 chunks: 5 s slowed
    start = time.perf_counter()
    with pytest.raises(SolveError) as caught:
        request.solve()
    took = time.perf_counter() - start
    assert caught.value.reason is Reason.TIME_LIMIT
    message = str(caught.value)
    assert message.startswith("out of time: the time limit of 2.5 s ran out after the plan, with ")
    assert "of the 50 per-scenario solves of EVPI done (skip EVPI and VSS with evpi=False): raise time_limit" in message
    assert "\n" not in message
    assert took < 2.5 + TIME_LIMIT_MARGIN


def test_a_chunk_that_starts_late_gets_what_is_left():
    problems = [from_ledger(LEDGER, budget=b) for b in (5e4, 1e5)]
    plain = uncertainty.best_values({"tolerance": 1e-4, "time_limit": 60.0}, problems)
    assert uncertainty.best_values({"tolerance": 1e-4, "deadline": Deadline.after(60.0)}, problems) == plain
    passed = Deadline(seconds=1.0, at=time.time() - 0.5)
    with pytest.raises(SolveError, match="out of time: the time limit of 1 s ran out") as caught:
        uncertainty.best_values({"tolerance": 1e-4, "deadline": passed}, problems)
    assert caught.value.reason is Reason.TIME_LIMIT


def test_vss_counts_against_the_same_deadline(monkeypatch):
    real = uncertainty.solve_by

    def late_for_vss(problem, deadline, **options):
        if options.get("fixed_hours") is not None:  # valuing the mean-scenario plan with recourse
            time.sleep(max(deadline.left(), 0.0) + 0.05)
        return real(problem, deadline, **options)

    monkeypatch.setattr(uncertainty, "solve_by", late_for_vss)
    request = solving.prepare(budget=100_000, samples=10, recourse_price_x=1.2, time_limit=5.0, workers=1)
    with pytest.raises(SolveError) as caught:
        request.solve()
    assert caught.value.reason is Reason.TIME_LIMIT
    assert "after the plan and EVPI's 10 per-scenario solves, before the mean-scenario plan of VSS" in str(caught.value)


def test_ranging_counts_against_the_same_deadline(monkeypatch):
    real = sensitivity.byte_price_range

    def late(problem, **options):
        time.sleep(max(options["deadline"].left(), 0.0) + 0.05)
        return real(problem, **options)

    # the plan and its range, unhurried, find the range; the plan alone ends well inside 5 s even
    # on a loaded machine, so only the range's lateness can use the limit up
    assert solving.prepare(budget=100_000, ranging=True, time_limit=60.0).solve().byte_price_range is not None
    monkeypatch.setattr(sensitivity, "byte_price_range", late)
    request = solving.prepare(budget=100_000, ranging=True, time_limit=5.0)
    with pytest.raises(SolveError, match="ran out after the plan, before its byte-price range was found") as caught:
        request.solve()
    assert caught.value.reason is Reason.TIME_LIMIT


def test_byte_price_range_stops_at_its_deadline():
    problem = from_ledger(LEDGER, budget=100_000)
    with pytest.raises(SolveError, match="out of time") as caught:
        sensitivity.byte_price_range(problem, deadline=Deadline(seconds=0.1, at=time.time() - 0.01))
    assert caught.value.reason is Reason.TIME_LIMIT


@pytest.mark.parametrize("limit", [0, -1.0, float("nan"), float("inf"), 1e400, 2e6])
def test_a_time_limit_that_is_not_a_positive_number_is_one_line(limit, capsys):
    # before: inf and 1e400 were taken as no limit at all, which no loop of a command honours
    with pytest.raises(InputError, match=r"time_limit = .* is invalid: must be a number ≥ 1e-09 and ≤ 1e\+06"):
        solving.prepare(budget=100_000, time_limit=limit)
    with pytest.raises(InputError, match="is invalid: must be a number ≥ 1e-09 and ≤ 1e\\+06"):
        Deadline.after(limit)
    assert main(["solve", "--budget", "100000", "--time-limit", str(limit)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is invalid: must be a number ≥ 1e-09 and ≤ 1e+06" in err


def test_the_command_ends_within_the_limit_and_its_margin(capsys):
    """Many samples and a small limit: the plan alone takes longer, and the command still ends
    in time (loading the ledger and drawing the samples, outside the limit, timed apart)."""
    limit, samples = 4.0, 2_000
    start = time.perf_counter()
    solving.prepare(budget=100_000, samples=samples)
    outside = time.perf_counter() - start
    start = time.perf_counter()
    code = main(["solve", "--budget", "100000", "--samples", str(samples), "--time-limit", str(limit)])
    took = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code in (0, 2)
    if code == 2:
        assert err.count("\n") == 1 and "out of time: the time limit of 4 s ran out" in err
    assert took < limit + TIME_LIMIT_MARGIN + outside


def test_no_local_cluster_starts_with_too_little_time_left(monkeypatch):
    monkeypatch.setattr(scale, "LOCAL_CLUSTER_PAYS_SECONDS", 0.5)
    where: list[str] = []
    got = scale.run_chunks(_slow_square, [[1], [2], [3]], args=(0.6,), workers=2, where=where,
                           deadline=Deadline.after(0.9))  # fmt: skip
    assert got == [1, 4, 9]
    assert where == ["3 chunks in this process"]


def _slow_square(seconds: float, part: list[int]) -> list[int]:
    time.sleep(seconds)
    return [i * i for i in part]
