"""Ctrl-C on ``procure app`` at any moment of its start: its standard error is one line.

    python benchmarks/app_ctrl_c.py [--delay 0] [--runs 8]

Starts the app ``--runs`` times on a free loopback port, waits ``--delay`` seconds once it
accepts connections (0: while its worker processes still load), sends SIGINT to its process
group as a terminal's Ctrl-C does, and counts the runs whose standard error is not exactly
``procure: aborted`` (before: 1 in 6 at a delay of 0 also printed the resource tracker's
"leaked semaphore" warning, from a worker ended during its warm-up). Loopback only, bounded by
``--runs``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_run(delay: float) -> str:
    """What the app printed on standard error, stopped ``delay`` s after it accepts connections."""
    port = free_port()
    proc = subprocess.Popen([*CLI, "app", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    return err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    bad = [err for err in (one_run(args.delay) for _ in range(args.runs)) if err != "procure: aborted\n"]
    for err in bad:
        print(repr(err[-300:]))
    print(f"Ctrl-C {args.delay:g} s after the app listens: {len(bad)} of {args.runs} runs printed more than one line")


if __name__ == "__main__":
    main()
