"""A battery of attacks on procure as users and web pages make them, each case judged from
outside: the command line run as a program, the app over raw HTTP and websockets on loopback.

    python benchmarks/attack_battery.py [--kills 10] [--skip-heavy]

Every case is a class of fault found before, replayed in a fresh folder made by ``procure
sample`` and ``procure init``:

1. another site's page or a rebound name: the app answers 403 to a forged ``Host`` and to a
   websocket handshake of another ``Origin``, and serves its own;
2. the copy box: its rule (:func:`procure.interfaces.pages.held.copy_target`, judged from the
   app's folder) takes no folder outside that folder or the user's home (the page itself, in
   a browser: ``tests/interfaces/test_app_forged.py``);
3. outputs over inputs: every command's output option aimed at a file it reads is refused, the
   file untouched;
4. the installation: no output lands in the installed package and no ledger edit in the
   shipped ledger;
5. ``--time-limit``: the two heaviest requests end within the limit and 3 s (loading not
   counted), and limits that bound nothing are refused;
6. Ctrl-C while a command works: one line, exit code 130, no traceback;
7. refusals, early and loud: bad money, empty lists, blank names, cells of spaces, malformed
   formats, a frame rate of a nanohertz, a FIFO with no reader;
8. the app's second copy (browser only: ``tests/interfaces/test_app_forged.py``) is left to the
   suite;
9. leftovers: a ledger edit killed with SIGKILL at random moments leaves the ledger whole and
   the next edit removes what it staged; ``--append`` keeps the file's trailing lines and line
   endings; a 20,000-digit cell is cut in the error line.

A case is broken when the exit code is not the one expected, a traceback reaches the terminal,
a refusal takes more than one line, a file that should not change changed (content or mode),
a file is left behind, or a limit is overrun. The table prints the cases and the broken per
class; the exit code is 1 if any is broken. Bounded: about 90 cases, 2 to 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from procure.ledger import load_ledger

CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]
#: How far past --time-limit a command may end, loading not counted [s] (docs/ledger.md).
MARGIN_S = 3.0
#: What ``import --append`` needs besides the dataset: the row's value scale [effective h].
APPEND = ["--append", "--saturation-hours", "100"]
#: The time limit of class 5 [s].
LIMIT_S = 5.0


def cli(args: list[str], cwd: Path, timeout: float = 300.0) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    done = subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - t0


def state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root`` (or ``root`` itself): its sha256 and mode."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() or p.is_fifo())
    out = {}
    for p in files:
        data = p.read_bytes() if p.is_file() else b"fifo"
        out[str(p)] = (hashlib.sha256(data).hexdigest(), p.lstat().st_mode)
    return out


def refusal(code: int, err: str) -> str | None:
    """What is wrong with a refusal: None for exit code 2 and one line without a traceback."""
    if "Traceback" in err:
        return "a traceback: " + err.strip().splitlines()[-1]
    if code != 2:
        return f"exit code {code}, not 2: {err.strip()[:200]}"
    if len(err.strip().splitlines()) != 1:
        return f"{len(err.strip().splitlines())} lines, not one"
    return None


def refused(args: list[str], cwd: Path, keep: list[Path], words: str = "") -> str | None:
    """A command refused in one line, the files ``keep`` unchanged and nothing left beside them."""
    before = {k: state(k) for k in keep}
    beside = {k: set(os.listdir(k.parent)) for k in keep}
    code, _out, err, _s = cli(args, cwd)
    wrong = refusal(code, err)
    if wrong is None and words and words not in err:
        wrong = f"the line does not say {words!r}: {err.strip()}"
    for k in keep:
        if state(k) != before[k]:
            wrong = wrong or f"{k} changed"
        if set(os.listdir(k.parent)) - beside[k]:
            wrong = wrong or f"left beside {k.name}: {sorted(set(os.listdir(k.parent)) - beside[k])}"
    return wrong


class Battery:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.cases: list[tuple[int, str, str | None]] = []

    def case(self, klass: int, name: str, check: Callable[[], str | None]) -> None:
        try:
            wrong = check()
        except Exception as exc:  # the battery's own failure to run a case is a broken case
            wrong = f"the case raised {type(exc).__name__}: {exc}"
        self.cases.append((klass, name, wrong))
        print(f"  [{klass}] {'ok    ' if wrong is None else 'BROKEN'} {name}" + (f": {wrong}" if wrong else ""),
              flush=True)  # fmt: skip


# ----------------------------------------------------------------------------- 1, 2: the app


def _app(cwd: Path) -> tuple[subprocess.Popen[str], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen([*CLI, "app", "--port", str(port)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("procure app did not listen within 60 s")


def _status(port: int, headers: dict[str, str], path: str = "/") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    status = conn.getresponse().status
    conn.close()
    return status


def _ws(port: int, origin: str | None, host: str) -> int:
    headers = {"Host": host, "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode()}  # fmt: skip
    if origin is not None:
        headers["Origin"] = origin
    return _status(port, headers, "/websocket/")


def app_cases(b: Battery) -> None:
    proc, port = _app(b.work)
    own = f"127.0.0.1:{port}"
    try:
        for host in ("evil.example.com", f"evil.example.com:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1",
                     f"rebound.test:{port}", f"localhost.evil.example.com:{port}"):  # fmt: skip
            b.case(1, f"GET / with Host {host}", lambda h=host: None if (s := _status(port, {"Host": h})) == 403
                   else f"status {s}")  # fmt: skip
        for origin in ("http://evil.example.com", "null", f"http://127.0.0.1:{port + 1}", f"ws://{own}",
                       f"http://{own}.evil.example.com", f"http://192.0.2.1:{port}"):  # fmt: skip
            b.case(1, f"websocket from Origin {origin}", lambda o=origin: None if (s := _ws(port, o, own)) == 403
                   else f"status {s}")  # fmt: skip
        b.case(
            1,
            "websocket of the app's origin with a forged Host",
            lambda: None if (s := _ws(port, f"http://{own}", "evil.example.com")) == 403 else f"status {s}",
        )
        b.case(1, "the app's own page and websocket are served",
               lambda: None if (_status(port, {"Host": own}), _ws(port, f"http://{own}", own)) == (200, 101)
               else "refused its own")  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            err = "did not stop on Ctrl-C"
    b.case(6, "Ctrl-C stops the app without a traceback",
           lambda: None if "Traceback" not in err and proc.returncode is not None else err[-300:])  # fmt: skip

    from procure.interfaces.pages.held import copy_target
    from procure.interfaces.pages.parts import Refused

    outside = Path(tempfile.mkdtemp(prefix="battery-outside-"))
    for name in ("/etc/procure-battery", str(outside / "x"), "../../procure-battery", "~/../procure-battery",
                 "~nosuchuser/x", "a\x00b", "/", str(b.work / "a" / ".." / ".." / "escape")):  # fmt: skip

        def copy(n: str = name) -> str | None:
            here = os.getcwd()
            os.chdir(b.work)  # the app's folder: relative names are read from it
            try:
                copy_target(n)
            except Refused:
                return None
            finally:
                os.chdir(here)
            return f"{n!r} taken"

        b.case(2, f"copy box {name!r}", copy)
    shutil.rmtree(outside, ignore_errors=True)


# ----------------------------------------------------------------------------- 3, 4: outputs


def output_cases(b: Battery, data: Path, led: Path) -> None:
    src, cluster, runs = led / "sources.csv", led / "cluster.toml", data / "runs.csv"
    video, info = data / "cams" / "front.mp4", data / "lerobot_v3" / "meta" / "info.json"
    scen = data / "scenarios.csv"
    cases = [
        (["fit", str(runs), "--ledger", str(led), "--json", str(runs)], runs),
        (["fit", str(runs), "--ledger", str(led), "--json", str(src)], src),
        (["fit", str(runs), "--ledger", str(led), "--scenarios", str(cluster)], cluster),
        (["calibrate", str(video), "--json", str(video)], video),
        (["import", "lerobot", str(data / "lerobot_v3"), "--json", str(info)], info),
        (
            ["import", "rlds", str(data / "rlds"), "--hz", "5", "--json", str(data / "rlds" / "dataset_info.json")],
            data / "rlds" / "dataset_info.json",
        ),
        (["solve", "--ledger", str(led), "--json", str(src)], src),
        (["solve", "--ledger", str(led), "--csv", str(cluster)], cluster),
        (["solve", "--ledger", str(led), "--scenarios", str(scen), "--json", str(scen)], scen),
        (["bill", "--ledger", str(led), "--json", str(cluster)], cluster),
        (["rank", "--ledger", str(led), "--json", str(src)], src),
        (["sensitivity", "--ledger", str(led), "--csv", str(src)], src),
        (["report", "--ledger", str(led), "--out", str(src)], src),
        (["simulate", "--ledger", str(led), "--json", str(cluster)], cluster),
    ]
    for args, kept in cases:
        b.case(3, " ".join(a if "/" not in a else Path(a).name for a in args),
               lambda a=args, k=kept: refused(a, b.work, [k], f"reads ({k})"))  # fmt: skip

    import procure

    package = Path(procure.__file__).resolve().parent
    shipped = package / "ledgers" / "default"
    shipped = shipped if shipped.is_dir() else package.parent / "ledgers" / "default"
    models = package / "models" if (package / "models").is_dir() else package.parent / "models"
    before = {**state(package), **state(shipped), **state(models)}
    for args in (["solve", "--json", str(shipped / "sources.csv")], ["bill", "--json", str(shipped / "cluster.toml")],
                 ["fit", str(runs), "--json", str(models / "93m.toml")],
                 ["fit", str(runs), "--ledger", str(led), "--json", str(models / "93m.toml")],
                 ["solve", "--ledger", str(led), "--csv", str(shipped / "plan.csv")],
                 ["report", "--out", str(package / "report.html")],
                 ["import", "lerobot", str(data / "lerobot_v3"), *APPEND, "--ledger", str(shipped)],
                 ["fit", str(runs), "--write"],
                 ["calibrate", str(video), "--source", "own", "--write", "--ledger", str(shipped)]):  # fmt: skip
        b.case(4, " ".join(a if "/" not in a else Path(a).name for a in args), lambda a=args: refused(a, b.work, []))
    b.case(4, "the installation is as it was", lambda: None if {**state(package), **state(shipped),
                                                                 **state(models)} == before else "changed")  # fmt: skip


# ----------------------------------------------------------------------------- 5, 6, 7: limits


def limit_cases(b: Battery, heavy: bool) -> None:
    for value in ("inf", "1e400", "nan", "-1", "0", "x"):
        b.case(5, f"--time-limit {value}", lambda v=value: refused(["solve", "--time-limit", v], b.work, []))
    if not heavy:
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from time_limit import hill_ledger, periods_file

    folder = Path(tempfile.mkdtemp(prefix="battery-limit-", dir=b.work))
    hills, periods = hill_ledger(folder / "hills"), periods_file(folder / "periods.csv", 200)
    for name, args, load in (
        ("1,000 sources, half S-shaped", ["solve", "--ledger", str(hills), "--budget", "200000"],
         ["bill", "--ledger", str(hills), "--json"]),
        ("200 periods, 50 scenarios", ["solve", "--periods", str(periods), "--samples", "50"], ["bill", "--json"]),
    ):  # fmt: skip

        def run(a: list[str] = args, lo: list[str] = load) -> str | None:
            loading = cli(lo, b.work)[3]
            code, _o, err, secs = cli([*a, "--time-limit", str(LIMIT_S)], b.work)
            if "Traceback" in err or code not in (0, 2):
                return f"exit code {code}: {err.strip()[-200:]}"
            return None if secs - loading <= LIMIT_S + MARGIN_S else f"{secs:.1f} s, loading {loading:.1f} s"

        b.case(5, f"{name} with --time-limit {LIMIT_S:g}", run)


def interrupt_cases(b: Battery, data: Path, led: Path) -> None:
    fit = ["fit", str(data / "runs.csv"), "--ledger", str(led)]
    scenarios = ["solve", "--budget", "100k", "--samples", "200"]
    for name, args, after in (("fit while sampling", fit, 2.5), ("solve over 200 scenarios", scenarios, 2.5)):

        def run(a: list[str] = args, wait: float = after) -> str | None:
            proc = subprocess.Popen([*CLI, *a], cwd=b.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(wait)
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=60)
            if proc.returncode == 0:
                return None  # it finished first: nothing to judge
            if "Traceback" in err or proc.returncode != 130 or len(err.strip().splitlines()) != 1:
                return f"exit code {proc.returncode}, {len(err.strip().splitlines())} lines: {err.strip()[-200:]}"
            return None

        b.case(6, f"Ctrl-C during {name}", run)


def refusal_cases(b: Battery, data: Path, led: Path) -> None:
    runs, lerobot = data / "runs.csv", data / "lerobot_v3"
    src = led / "sources.csv"
    for args in (["fit", str(runs), "--budget", "nan", "--next"], ["fit", str(runs), "--budget", "inf", "--next"],
                 ["fit", str(runs), "--budget", "-5", "--next"], ["fit", str(runs), "--fit", ""],
                 ["fit", str(runs), "--fit", ",,"], ["fit", str(runs), "--fit", "twin.exchange_rate,,"],
                 ["import", "lerobot", str(lerobot), "--source", ""], ["import", "lerobot", str(lerobot), "--kind", ""],
                 ["import", "lerobot", str(lerobot), "--source", "   "], ["solve", "--budget", "12abc"],
                 ["solve", "--budget", "$-5"], ["solve", "--held", "own=-1"], ["solve", "--max-share", "twin=2"],
                 ["solve", "--budget", "100k", "--formats", "+"],
                 ["solve", "--budget", "100k", "--formats", "recorded++decoded"]):  # fmt: skip
        b.case(7, " ".join(a if "/" not in a else Path(a).name for a in args) or "?",
               lambda a=args: refused(a, b.work, [src]))  # fmt: skip
    text = src.read_text()
    header, *rows = text.splitlines()
    columns = header.split(",")
    for column in ("stored", "read", "curve"):
        k = columns.index(column)

        def spaces(c: str = column, i: int = k) -> str | None:
            # a cell of spaces is a blank cell (docs/ledger.md): the plan is the blank cell's
            plans = []
            for name, cell in (("spaces", "   "), ("blank", "")):
                folder = led.parent / f"{name}-{c}"
                shutil.copytree(led, folder)
                cells = rows[0].split(",")
                cells[i] = cell
                (folder / "sources.csv").write_text("\n".join([header, ",".join(cells), *rows[1:]]) + "\n")
                code, out, err, _s = cli(["solve", "--ledger", str(folder), "--budget", "100k", "--json"], b.work)
                if code or "Traceback" in err:
                    return f"{name}: exit code {code}: {err.strip()[-200:]}"
                plans.append([(r["source"], r["hours"]) for r in json.loads(out)["plan"]])
            return None if plans[0] == plans[1] else "a cell of spaces is read otherwise than a blank one"

        b.case(7, f"a {column} cell of spaces is a blank cell", spaces)
    slow = led.parent / "slow_fps"
    shutil.copytree(lerobot, slow)
    info = slow / "meta" / "info.json"
    info.write_text(info.read_text().replace('"fps": 30', '"fps": 1e-9'))
    b.case(7, "info.json at fps 1e-9", lambda: refused(["import", "lerobot", str(slow), "--json"], b.work, [info]))
    fifo = b.work / "out.fifo"
    os.mkfifo(fifo)

    def no_reader() -> str | None:
        code, _o, err, secs = cli(["bill", "--json", str(fifo)], b.work, timeout=120)
        wrong = refusal(code, err)
        left = [p for p in b.work.iterdir() if p.name.startswith(".out.fifo")]
        return wrong or (f"left {left}" if left else None) or (None if secs < 60 else f"{secs:.0f} s")

    b.case(7, "a FIFO output with no reader", no_reader)


# ----------------------------------------------------------------------------- 9: leftovers


def leftover_cases(b: Battery, data: Path, led: Path, kills: int) -> None:
    edited = led.parent / "killed"
    shutil.copytree(led, edited)
    src = edited / "sources.csv"
    rng = random.Random(7)
    for k in range(kills):
        args = ["import", "lerobot", str(data / "lerobot_v3"), *APPEND, "--ledger", str(edited), "--source",
                f"killed{k}"]  # fmt: skip

        def kill(a: list[str] = args, k: int = k) -> str | None:
            before = src.read_text()
            proc = subprocess.Popen([*CLI, *a], cwd=b.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.8, 4.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            after = src.read_text()
            if after == before:
                return None
            now = load_ledger(edited).sources  # whole, and the old rows as they were
            then = pd.read_csv(io.StringIO(before), dtype=str, keep_default_na=False)
            if list(now["source"]) != [*then["source"], f"killed{k}"]:
                return f"the ledger's sources are {list(now['source'])}"
            kept = pd.read_csv(io.StringIO(after), dtype=str, keep_default_na=False)[list(then.columns)]
            return None if kept.iloc[:-1].equals(then) else "an old row changed"

        b.case(9, f"SIGKILL during --append {k + 1}", kill)

    def next_edit() -> str | None:
        # a kill lands in the few milliseconds an edit holds its files rarely: what a writer
        # killed there leaves is planted, for both files an import edits (docs/guarantees.md)
        cams = edited / "cameras.csv"
        if not cams.exists():
            cams.write_text("source,camera,count,width,height,fps,bits_per_pixel,gop\n")
        gone, kept = [], []
        for f in (src, cams):
            staged = f.with_name(f".{f.name}.ab12cd34{f.suffix}")  # its new content, staged
            staged.write_bytes(f.read_bytes())
            second = f.with_name(f".{f.name}.0123abcd.old")  # killed before its rename: the file itself
            os.link(f, second)
            replaced = f.with_name(f".{f.name}.89abcdef.old")  # killed after it: the only old copy
            replaced.write_bytes(f.read_bytes())
            gone += [staged, second]
            kept.append(replaced)
        code, _o, err, _s = cli(["import", "lerobot", str(data / "lerobot_v3"), *APPEND, "--ledger", str(edited),
                                 "--source", "after"], b.work)  # fmt: skip
        if code:
            return f"exit code {code}: {err.strip()[-200:]}"
        left = [p.name for p in gone if p.exists()]
        lost = [p.name for p in kept if not p.exists()]
        return (f"left {left}" if left else None) or (f"removed {lost}" if lost else None)

    b.case(9, "the next edit removes what killed edits left, and keeps an old copy", next_edit)
    for name, ending, trail in (("trailing blank lines", "\n", "\n\n"), ("CRLF line endings", "\r\n", "\r\n")):

        def append(e: str = ending, t: str = trail, n: str = name) -> str | None:
            folder = led.parent / n.replace(" ", "_")
            shutil.copytree(led, folder)
            lines = (led / "sources.csv").read_text().splitlines()
            (folder / "sources.csv").write_bytes((e.join(lines) + t).encode())
            cams = "source,camera,count,width,height,fps,bits_per_pixel,gop"  # the sample's cameras differ in size
            (folder / "cameras.csv").write_bytes((cams + t).encode())
            code, _o, err, _s = cli(["import", "lerobot", str(data / "lerobot_v3"), *APPEND, "--ledger", str(folder),
                                     "--source", "new"], b.work)  # fmt: skip
            if code:
                return f"exit code {code}: {err.strip()[-200:]}"
            for file, rows in (("sources.csv", 1), ("cameras.csv", 2)):
                raw = (folder / file).read_bytes().decode()
                if not raw.endswith(t) or (e == "\r\n" and raw.count("\n") != raw.count("\r\n")):
                    return f"{file} ends {raw[-8:]!r}"
                if raw.count("\nnew,") != rows:
                    return f"{file}: {raw.count(chr(10) + 'new,')} rows added, not {rows}"
            return None

        b.case(9, f"--append keeps {name}", append)

    def long_cell() -> str | None:
        folder = led.parent / "long"
        shutil.copytree(led, folder)
        text = (folder / "sources.csv").read_text().replace("\nown,own,123.60,", "\nown,own," + "9" * 20_000 + ",")
        (folder / "sources.csv").write_text(text)
        code, _o, err, _s = cli(["solve", "--ledger", str(folder), "--budget", "100k"], b.work)
        return refusal(code, err) or (None if len(err) < 800 and "(20,000 characters)" in err else err[-300:])

    b.case(9, "a 20,000-digit price is cut in the error line", long_cell)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10, help="SIGKILLs of a ledger edit")
    parser.add_argument("--skip-heavy", action="store_true", help="leave out the two heavy --time-limit requests")
    a = parser.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="procure-battery-") as folder:
        work = Path(folder)
        b = Battery(work)
        for args in (["sample", "data"], ["init", "led"]):
            code, _o, err, _s = cli(args, work)
            if code:
                sys.exit(f"setup failed: procure {' '.join(args)}: {err}")
        data, led = work / "data", work / "led"
        print("1, 2, 6: the app", flush=True)
        app_cases(b)
        print("3, 4: outputs", flush=True)
        output_cases(b, data, led)
        print("5: time limits", flush=True)
        limit_cases(b, not a.skip_heavy)
        print("6: Ctrl-C", flush=True)
        interrupt_cases(b, data, led)
        print("7: refusals", flush=True)
        refusal_cases(b, data, led)
        print("9: leftovers", flush=True)
        leftover_cases(b, data, led, a.kills)
    print(f"\n{'class':>5}  {'cases':>5}  {'broken':>6}")
    for klass in sorted({c[0] for c in b.cases}):
        rows = [c for c in b.cases if c[0] == klass]
        print(f"{klass:>5}  {len(rows):>5}  {sum(c[2] is not None for c in rows):>6}")
    broken = sum(c[2] is not None for c in b.cases)
    print(f"{'all':>5}  {len(b.cases):>5}  {broken:>6}   ({time.perf_counter() - t0:.0f} s)")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
