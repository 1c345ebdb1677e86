"""A ``--scheduler`` that cannot hang the command: a bad address, a peer that is not a Dask
scheduler and a cluster whose workers die each end in one line, before any solve where they can.

Every peer here is on 127.0.0.1, made by the test in a thread and closed by it.
"""

from __future__ import annotations

import http.server
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from procure.analyses import scale, scheduler, uncertainty
from procure.analyses.scale import run_chunks
from procure.analyses.scheduler import SCHEDULER_FORMS, SCHEDULER_TIMEOUT, check_scheduler, scheduler_address
from procure.errors import InputError, SolveError
from procure.interfaces.cli import main

distributed = pytest.importorskip("distributed")

#: A command whose scheduler does not answer must end within this [s] (the handshake's
#: timeout, the solve it then never starts, and the test's own overhead).
ENDS_WITHIN = 15.0
#: Connections a mute listener takes before it stops accepting.
MUTE_ACCEPTS = 16


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("procure: error: "), err
    return err


@pytest.fixture
def mute() -> Iterator[str]:
    """A TCP listener on 127.0.0.1 that accepts connections and never says a word."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(MUTE_ACCEPTS)
    held: list[socket.socket] = []

    def accept() -> None:
        for _ in range(MUTE_ACCEPTS):
            try:
                conn, _peer = server.accept()
            except OSError:  # closed by the fixture
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.shutdown(socket.SHUT_RDWR)  # wakes the thread's accept
    server.close()
    for conn in held:
        conn.close()
    thread.join(timeout=1)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def log_error(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    """An HTTP server on 127.0.0.1, in a thread."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=1)


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any solve of a scenario request fails the test (exit 1, not 2)."""

    def solve(*args: object, **kwargs: object) -> None:
        raise AssertionError("a solve started")

    monkeypatch.setattr(uncertainty, "solve_by", solve)


# ----------------------------------------------------------------------------- the address's form


@pytest.mark.parametrize(
    ("given", "full"),
    [
        ("127.0.0.1:8786", "tcp://127.0.0.1:8786"),
        ("tcp://scheduler.lab:8786", "tcp://scheduler.lab:8786"),
        (" tls://10.0.0.5:8786 ", "tls://10.0.0.5:8786"),
        ("tcp://[::1]:8786", "tcp://[::1]:8786"),
    ],
)
def test_the_forms_allowed(given, full):
    assert scheduler_address(given) == full


@pytest.mark.parametrize(
    "address",
    ["garbage", "tcp://", "http://127.0.0.1:8786", "tcp://[::1", "tcp://host", "tcp://host:0", "host:65536",
     "tcp://host:8786/path", "", "ucx://host:8786"],
)  # fmt: skip
def test_a_malformed_address_is_one_line_before_anything_is_solved(address, no_solve, capsys):
    start = time.perf_counter()
    code = main(["solve", "--budget", "100000", "--samples", "2000", "--scheduler", address])
    err = _one_line(capsys.readouterr().err)
    assert code == 2
    assert f"{address!r} is invalid: must be {SCHEDULER_FORMS}" in err
    assert time.perf_counter() - start < SCHEDULER_TIMEOUT  # not even a connection was tried


def test_a_malformed_address_fails_the_sweep_too():
    from procure.analyses.sensitivity import sweep
    from procure.ledger import load_ledger

    with pytest.raises(InputError, match="must be tcp://host:port"):
        sweep(load_ledger(), "byte_price_x", 0.5, 2.0, 3, budget=100_000, scheduler="garbage")


# ----------------------------------------------------------------------------- peers that are not schedulers


def test_a_mute_listener_fails_in_seconds_with_one_line(mute, no_solve, capsys):
    start = time.perf_counter()
    code = main(["solve", "--budget", "100000", "--samples", "2000", "--scheduler", mute])
    took = time.perf_counter() - start
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and took < ENDS_WITHIN
    assert mute in err and "did not answer Dask's handshake" in err and "expected a Dask scheduler" in err


def test_an_http_server_fails_in_seconds_with_one_line(web, no_solve, capsys):
    start = time.perf_counter()
    code = main(["solve", "--budget", "100000", "--samples", "2000", "--scheduler", web])
    took = time.perf_counter() - start
    err = _one_line(capsys.readouterr().err)
    assert code == 2 and took < ENDS_WITHIN
    assert web in err and "expected a Dask scheduler" in err


def test_nothing_listening_is_said():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # the port is free again: nothing listens there
    start = time.perf_counter()
    with pytest.raises(InputError, match="nothing accepts connections there"):
        check_scheduler(f"127.0.0.1:{port}", timeout=1.0)
    assert time.perf_counter() - start < 1.0 + scale.RESULT_GRACE_SECONDS + scheduler.CONNECT_CHECK_SECONDS


# ----------------------------------------------------------------------------- workers that die


@pytest.fixture
def one_worker() -> Iterator[object]:
    """A cluster of one worker process, restarted by its nanny when it dies."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1", silence_logs=logging.CRITICAL) as cluster:  # fmt: skip
        yield cluster


def test_a_worker_is_not_a_scheduler(one_worker):
    worker = next(iter(one_worker.scheduler_info["workers"]))
    with pytest.raises(InputError, match="a Dask worker answered there, not a scheduler"):
        check_scheduler(worker)
    assert check_scheduler(one_worker.scheduler_address) == one_worker.scheduler_address


def _die_once(marker: str, part: list[int]) -> list[int]:
    """A chunk whose first run kills its worker process (the marker file says it has died)."""
    if not Path(marker).exists():
        Path(marker).write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)
    return [2 * i for i in part]


def _die_always(marker: str, part: list[int]) -> list[int]:
    """A chunk that kills its worker process every time it runs."""
    with Path(marker).open("a") as fh:
        fh.write("died\n")
    os.kill(os.getpid(), signal.SIGKILL)
    return part


def test_a_chunk_whose_worker_died_runs_again(one_worker, tmp_path):
    marker = tmp_path / "died"
    notes: list[str] = []
    got = run_chunks(_die_once, [[1, 2], [3]], args=(str(marker),), scheduler=one_worker.scheduler_address,
                     notes=notes)  # fmt: skip
    assert got == [2, 4, 6]
    assert marker.read_text() == "died"
    assert any("was lost on the Dask cluster" in note and "ran again" in note for note in notes)


def test_a_chunk_lost_twice_is_one_line(one_worker, tmp_path):
    marker = tmp_path / "deaths"
    with pytest.raises(SolveError) as caught:
        run_chunks(_die_always, [[1]], args=(str(marker),), scheduler=one_worker.scheduler_address)
    message = str(caught.value)
    assert "\n" not in message
    assert "chunk 1 of 1 was lost" in message and f"{scale.CHUNK_RETRIES + 1} times" in message
    assert caught.value.reason is scale.LOST_WORK_REASON
    assert marker.read_text().count("died") == scale.CHUNK_RETRIES + 1  # ran once, and once again


def _evpi_chunk_that_kills(options: dict, problems: list) -> list[float]:
    os.kill(os.getpid(), signal.SIGKILL)
    return []


def test_the_command_ends_in_one_line_when_every_worker_dies(one_worker, monkeypatch, capsys):
    monkeypatch.setattr(uncertainty, "wait_and_see_chunk", _evpi_chunk_that_kills)
    code = main(["solve", "--budget", "100000", "--samples", "20", "--scheduler", one_worker.scheduler_address])
    err = _one_line(capsys.readouterr().err)
    assert code == 2
    assert f"was lost on the Dask cluster at {one_worker.scheduler_address} 2 times" in err


def _sleep(seconds: float, part: list[int]) -> list[int]:
    time.sleep(seconds)
    return part


def test_waiting_on_a_cluster_ends_at_the_deadline(one_worker):
    limit = 0.5
    deadline = scale.Deadline.after(limit)
    start = time.perf_counter()
    with pytest.raises(SolveError, match="out of time") as caught:
        run_chunks(_sleep, [[1]], args=(limit + scale.RESULT_GRACE_SECONDS + 1.0,),
                   scheduler=one_worker.scheduler_address, deadline=deadline)  # fmt: skip
    assert caught.value.reason.value == "time_limit"
    assert time.perf_counter() - start < limit + scale.RESULT_GRACE_SECONDS + 1.0
