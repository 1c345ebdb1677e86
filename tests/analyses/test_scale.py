"""Scale-out on Dask: a local cluster of 2 worker processes gives exactly the serial results; the
cluster listens on loopback only and has at most one worker per core."""

from __future__ import annotations

import json
import logging
import os

import numpy as np
import pandas as pd
import pytest

from procure.analyses import scale
from procure.analyses.sensitivity import POINTS_PER_CHUNK, sweep
from procure.analyses.uncertainty import solve_uncertain
from procure.errors import InputError
from procure.interfaces.cli import main
from procure.ledger import load_ledger
from procure.ledger.scenarios import sample_scenarios
from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.numbers.scenarios import scenario_problem

distributed = pytest.importorskip("distributed")

LEDGER = load_ledger()


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as c:  # fmt: skip
        yield c


def _scenario_problem(n=30, samples=40, **options):
    ledger = random_ledger(n, 5)
    s = ledger.sources.copy()
    s["exchange_rate_low"] = 0.5 * s["exchange_rate"]
    s["exchange_rate_high"] = 1.5 * s["exchange_rate"]
    sc = sample_scenarios(s, samples, seed=1)
    return scenario_problem(from_ledger(ledger, budget=200_000), sc, **options)


@pytest.mark.parametrize("options", [{}, {"recourse_price_x": 1.2}])
def test_evpi_on_a_cluster_equals_the_serial_run(cluster, options):
    sp = _scenario_problem(**options)
    serial = solve_uncertain(sp, workers=1)
    spread = solve_uncertain(sp, scheduler=cluster.scheduler_address)
    assert "in this process" in serial.ran_on
    assert "Dask cluster" in spread.ran_on
    assert spread.evpi == serial.evpi
    assert spread.wait_and_see == serial.wait_and_see
    assert spread.vss == serial.vss
    np.testing.assert_array_equal(spread.plan.sources["hours"], serial.plan.sources["hours"])


def test_sweep_on_a_cluster_equals_the_serial_run(cluster):
    steps = 2 * POINTS_PER_CHUNK + 3  # three chunks, the last short
    serial = sweep(LEDGER, "byte_price_x", 0.1, 10, steps, budget=100_000, workers=1)
    spread = sweep(LEDGER, "byte_price_x", 0.1, 10, steps, budget=100_000, scheduler=cluster.scheduler_address)
    pd.testing.assert_frame_equal(spread, serial)
    assert serial["x"].nunique() == steps


def test_a_local_cluster_starts_when_the_work_pays(monkeypatch):
    monkeypatch.setattr(scale, "LOCAL_CLUSTER_PAYS_SECONDS", 0.0)
    where: list[str] = []
    done: list[int] = []
    got = scale.run_chunks(_square, scale.chunks(list(range(7)), 2), args=(3,), workers=2, where=where,
                           progress=lambda d, t: done.append(d))  # fmt: skip
    assert got == [3 * i * i for i in range(7)]
    assert "local Dask cluster of 2 worker processes" in where[0]
    assert sorted(done) == [1, 2, 3, 4]


def test_without_dask_the_work_runs_here_and_says_so(monkeypatch):
    monkeypatch.setattr(scale, "LOCAL_CLUSTER_PAYS_SECONDS", 0.0)
    monkeypatch.setattr(scale, "dask_missing", lambda: "Dask is not installed: pip install 'procure[scale]'")
    notes: list[str] = []
    got = scale.run_chunks(_square, scale.chunks(list(range(5)), 2), args=(1,), workers=2, notes=notes)
    assert got == [i * i for i in range(5)]
    assert notes == ["Dask is not installed: pip install 'procure[scale]'"]


def test_bad_workers_are_named():
    with pytest.raises(Exception, match="workers = 0 is invalid"):
        scale.run_chunks(_square, [[1]], args=(1,), workers=0)


def _square(factor, part):
    return [factor * i * i for i in part]


def _listening() -> set[tuple[int, str, int]]:
    """(pid, address, port) of every listening socket of this process and its children."""
    psutil = pytest.importorskip("psutil")
    found = set()
    for proc in [psutil.Process(), *psutil.Process().children(recursive=True)]:
        try:
            connections = proc.net_connections(kind="inet")
        except psutil.Error:  # a child that ended meanwhile
            continue
        found |= {(proc.pid, c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}
    return found


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a local cluster starts only on 2 cores or more")
def test_the_local_cluster_listens_on_loopback_only_and_has_a_worker_per_core(monkeypatch):
    monkeypatch.setattr(scale, "LOCAL_CLUSTER_PAYS_SECONDS", 0.0)
    before = _listening()
    opened: list[set[tuple[int, str, int]]] = []
    cores = os.cpu_count() or 1
    notes: list[str] = []
    where: list[str] = []
    got = scale.run_chunks(_square, scale.chunks(list(range(6)), 2), args=(1,), workers=cores + 10, notes=notes,
                           where=where, progress=lambda d, t: opened.append(_listening() - before))  # fmt: skip
    assert got == [i * i for i in range(6)]
    assert f"local Dask cluster of {cores} worker processes" in where[0]
    during = set().union(*opened[1:])  # the first chunk ran here, before the cluster started
    assert len(during) >= 3  # the scheduler, its HTTP server, and a worker at least
    assert {address for _pid, address, _port in during} == {"127.0.0.1"}  # nothing on 0.0.0.0 or ::
    assert notes == [f"workers = {cores + 10} is more than this machine's {cores} cores: at most {cores} worker "
                     "processes run"]  # fmt: skip


def test_workers_beyond_the_cores_are_a_note_of_the_plan(capsys):
    cores = os.cpu_count() or 1
    assert main(["solve", "--budget", "100000", "--samples", "5", "--workers", str(cores + 1), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert sum(f"workers = {cores + 1} is more than this machine's {cores} cores" in n for n in notes) == 1
    assert scale.worker_count(cores) == cores and scale.worker_count(None) == cores and scale.worker_count(1) == 1


def test_worker_processes_that_cannot_start_are_one_clear_error(monkeypatch):
    def no_workers(*_args, **_kwargs):
        raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(scale, "LOCAL_CLUSTER_PAYS_SECONDS", 0.0)
    monkeypatch.setattr(distributed, "LocalCluster", no_workers)
    with pytest.raises(InputError, match='needs if __name__ == "__main__"'):
        scale.run_chunks(_square, scale.chunks(list(range(5)), 2), args=(1,), workers=2)
