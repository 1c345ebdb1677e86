"""Load on ``procure app``: many browser sessions moving the budget at once.

    python benchmarks/app_load.py [--sessions 20] [--moves 10] [--ledger DIR] [--seconds 300]

Starts ``procure app`` on a free port of 127.0.0.1 and opens ``--sessions`` sessions over
websockets, each speaking Shiny's protocol as a browser on the Plan page does (its init
message: every input at its starting value, the Plan page's outputs shown and the others
hidden). Once every session shows its first plan, each moves the budget ``--moves`` times,
as fast as the plans come back: a move is timed from sending the new budget to receiving
the new ``plan_value``. Prints the median and the 90th percentile of the moves, and the
resident memory of the server with its worker processes (summed) at the start, once one
session has come and gone (the libraries and templates any first session loads), at the
sessions' busiest and after they have closed, for ``--rounds`` rounds. Bounded: at most
``--seconds`` of wall time a round, after which it stops and says so.

Goals: p90 < 1 s with 20 sessions; memory after close within 20 MB of before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

#: Seconds a server has to start listening.
START_SECONDS = 60
#: Most seconds to wait for the server and its workers to be idle before memory is read.
SETTLE_SECONDS = 60
#: Seconds after the sessions close before the wait for idle starts.
AFTER_SECONDS = 3
#: Share of one core below which the server and its workers count as idle [1].
IDLE_CPU = 0.05
#: The first budget and the step between moves [$].
BUDGET, STEP = 80_000.0, 1_000.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(ledger: Path | None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    code = "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"
    args = [sys.executable, "-c", code, "app", "--port", str(port)] + (["--ledger", str(ledger)] if ledger else [])
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, port
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"procure app exited: {proc.stderr.read() if proc.stderr else ''}") from None
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"procure app did not listen within {START_SECONDS} s")


def rss_each(pid: int) -> list[float]:
    """Resident memory of a process, then of each of its descendants [MB]."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []
    out = []
    for p in procs:
        try:
            out.append(p.memory_info().rss / 1e6)
        except psutil.NoSuchProcess:
            pass
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants [MB]."""
    return sum(rss_each(pid))


def init_message(ledger_dir: Path | None, port: int, page: str = "Plan") -> dict[str, Any]:
    """The init message a browser sends on opening the app and going to ``page``."""
    from procure.interfaces.pages import held, plan
    from procure.ledger import load_ledger

    ledger = load_ledger(ledger_dir)
    row = ledger.sources.iloc[0]
    c = ledger.cluster
    data: dict[str, Any] = {
        "page": page, "save:shiny.action": 0, "kind": str(row["source"]), "resolution": "1080p", "model": c.model,
        "accelerator": c.accelerator, "read": str(row["read"]), "byte_price_x": "1",
        "cores": float(c.cores_per_accelerator), "budget_slider": 5, "nvdec": bool(c.nvdec),
        "cameras:shiny.number": float(row["cameras"]), "width:shiny.number": float(row["width"]),
        "height:shiny.number": float(row["height"]), "fps:shiny.number": float(row["fps"]),
        "params:shiny.number": None, "budget:shiny.number": 100_000,
    }  # fmt: skip
    for i, name in enumerate(held.editable(ledger)):
        data[f"held_{i}:shiny.number"] = float(ledger.source(name)["held_hours"])
    for i in range(len(plan.kinds(ledger))):
        data[f"max_share_{i}:shiny.number"] = None
    shown = {"Plan": ["plan_value", "lambda", "spent_usd", "plan_message", "plan_table", "plan_more", "capacities",
                      "sources_table", "sources_more", "curves", "curves_note", "budget_message", "save_message"],
             "Pipeline": ["busy", "stage", "cores_needed", "pixels_per_token", "gb_per_hour", "bill_usd", "share",
                          "stage_rates", "bill_split", "queue", "cameras_message", "pipeline_message"]}  # fmt: skip
    hidden = [*shown["Pipeline"], *shown["Plan"], "byte_prices", "ranging", "sweep_table"]
    for output in hidden:
        data[f".clientdata_output_{output}_hidden"] = output not in shown[page]
    data.update({".clientdata_pixelratio": 1, ".clientdata_url_protocol": "http:",
                 ".clientdata_url_hostname": "127.0.0.1", ".clientdata_url_port": str(port),
                 ".clientdata_url_pathname": "/", ".clientdata_url_search": "", ".clientdata_url_hash_initial": "",
                 ".clientdata_url_hash": "", ".clientdata_singletons": ""})  # fmt: skip
    return {"method": "init", "data": data}


class Session:
    """One browser session over a websocket: the outputs' latest values as they arrive."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.values: dict[str, Any] = {}
        self.changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message)
            values = data.get("values") if isinstance(data, dict) else None
            if values:
                self.values.update(values)
                self.changed.set()

    async def wait(self, output: str, ok: Any, timeout: float) -> Any:
        """The value of ``output`` once ``ok(value)`` holds."""
        deadline = time.monotonic() + timeout
        while not (output in self.values and ok(self.values[output])):
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{output} is {self.values.get(output)!r}")
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                pass
        return self.values[output]

    async def send(self, **inputs: Any) -> None:
        await self.ws.send(json.dumps({"method": "update", "data": inputs}))

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def open_session(port: int, init: dict[str, Any]) -> Session:
    from websockets.asyncio.client import connect

    ws = await connect(f"ws://127.0.0.1:{port}/websocket/", max_size=None, open_timeout=60)
    await ws.send(json.dumps(init))
    return Session(ws)


def plan_shown(value: Any) -> bool:
    return isinstance(value, str) and value[:1].isdigit()


async def move_budget(session: Session, budget: float, timeout: float) -> float:
    """Seconds from sending ``budget`` to the new plan's value arriving."""
    before = session.values.get("plan_value")
    t0 = time.perf_counter()
    await session.send(**{"budget:shiny.number": budget})
    await session.wait("plan_value", lambda v: plan_shown(v) and v != before, timeout)
    return time.perf_counter() - t0


async def load(port: int, init: dict[str, Any], sessions: int, moves: int, seconds: float,
               peak: list[float], pid: int) -> tuple[list[float], bool]:  # fmt: skip
    deadline = time.monotonic() + seconds
    opened = await asyncio.gather(*[open_session(port, init) for _ in range(sessions)])
    await asyncio.gather(*[s.wait("plan_value", plan_shown, seconds) for s in opened])
    times: list[float] = []
    done = True

    async def run(k: int, s: Session) -> None:
        nonlocal done
        for m in range(moves):
            left = deadline - time.monotonic()
            if left <= 0:
                done = False
                return
            times.append(await move_budget(s, BUDGET + STEP * (k * moves + m + 1), left))

    async def watch() -> None:
        while True:
            peak.append(rss_mb(pid))
            await asyncio.sleep(0.5)

    watcher = asyncio.create_task(watch())
    try:
        await asyncio.gather(*[run(k, s) for k, s in enumerate(opened)])
    finally:
        watcher.cancel()
        await asyncio.gather(*[s.close() for s in opened])
    return times, done


def settle(pid: int) -> None:
    """Wait until the server and its workers are idle (after :data:`AFTER_SECONDS`, less than
    :data:`IDLE_CPU` of a core over a second), at most :data:`SETTLE_SECONDS` more."""
    time.sleep(AFTER_SECONDS)
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]  # workers come and go
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.cpu_percent(None)
        time.sleep(1.0)
        busy = 0.0
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                busy += p.cpu_percent(None)
        if busy < 100 * IDLE_CPU:
            return


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--ledger", type=Path, default=None)
    parser.add_argument("--seconds", type=float, default=300.0, help="Most wall time for the sessions [s].")
    parser.add_argument("--rounds", type=int, default=2, help="Times the sessions open, move and close.")
    args = parser.parse_args()
    proc, port = start_server(args.ledger)
    try:
        settle(proc.pid)
        start = rss_mb(proc.pid)
        init = init_message(args.ledger, port)
        asyncio.run(load(port, init, 1, 2, args.seconds, [], proc.pid))  # one session: what any first one loads
        settle(proc.pid)
        before, before_each = rss_mb(proc.pid), rss_each(proc.pid)
        print(f"memory of the server and its {len(before_each) - 1} worker processes: {start:.0f} MB at the start, "
              f"{before:.0f} MB once one session has come and gone")  # fmt: skip
        for r in range(args.rounds):
            peak: list[float] = []
            times, done = asyncio.run(load(port, init, args.sessions, args.moves, args.seconds, peak, proc.pid))
            settle(proc.pid)
            after, after_each = rss_mb(proc.pid), rss_each(proc.pid)
            print(f"round {r + 1}: {args.sessions} sessions, {len(times)} budget moves"
                  f"{'' if done else ' (stopped at the time limit)'}: median {1000 * statistics.median(times):.0f} ms, "
                  f"p90 {1000 * percentile(times, 0.9):.0f} ms, max {1000 * max(times):.0f} ms; memory busiest "
                  f"{max(peak, default=0):.0f} MB, after close {after:.0f} MB ({after - before:+.0f} MB)")  # fmt: skip
        each = ", ".join(f"{a:.0f} → {b:.0f}" for a, b in zip(before_each, after_each, strict=False))
        print(f"each process (the server first), before → after the last close [MB]: {each}")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
