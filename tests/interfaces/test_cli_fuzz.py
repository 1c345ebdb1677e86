"""The command line over damaged ledgers and odd options: exit 0 or 2, one clear line, never a traceback.

Hypothesis damages one to three cells of the default ledger's ``sources.csv`` or one key of
its ``cluster.toml`` (numbers out of range, non-numbers, huge and tiny values, odd text) and
runs a command with options drawn from the odd values a user may type. Every run must end in
exit code 0 or 2 with at most two lines on standard error and no traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

from conftest import DEFAULT_LEDGER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procure.interfaces.cli import main

#: Runs of the fuzz test: bounded so that the suite stays fast (PROCURE_FUZZ_EXAMPLES for more).
EXAMPLES = int(os.environ.get("PROCURE_FUZZ_EXAMPLES", "60"))

ODD_NUMBERS = ["0", "-1", "1e308", "-1e308", "1e-308", "nan", "inf", "-inf", "1e20", "0.5", "3", "1e9", "", " ", "abc"]
ODD_TEXT = ["", "a,b", "[bold]x[/bold]", "é$\\alpha$", "名前", "x" * 300, "'", '"', "#", "  own  "]
COLUMNS = list(DEFAULT_LEDGER.sources.columns[:22])
CLUSTER_KEYS = [
    ("accelerator", "count"), ("accelerator", "mfu"), ("decode", "cores_per_accelerator"), ("decode", "gop"),
    ("decode", "core_fps_1080p"), ("prices", "byte_usd_per_gb"), ("training", "epochs"),
    ("training", "window_hours"), ("training", "horizon_months"), ("capacity", "storage_gb"), ("model", "params"),
]  # fmt: skip

COMMANDS = st.sampled_from(
    [
        ["bill"],
        ["bill", "--json"],
        ["simulate", "--frames", "2000", "--json"],
        ["solve", "--budget", "100000"],
        ["solve", "--budget", "100000", "--json"],
        ["solve", "--target", "300", "--json"],
        ["rank", "--by", "value", "--budget", "50000"],
        ["rank", "--by", "volume"],
        ["sensitivity", "--steps", "2", "--byte-price-x", "1", "1"],
    ]
)
ODD_OPTIONS = st.sampled_from(
    [
        [],
        ["--cores", "0"],
        ["--cores", "-3"],
        ["--cores", "1e300"],
        ["--width", "0.5"],
        ["--fps", "1e308"],
        ["--byte-price-x", "0"],
        ["--byte-price-x", "1e300"],
        ["--params", "1"],
        ["--side", "1"],
        ["--tolerance", "0.9"],
        ["--held", "own=1e300"],
        ["--max-share", "sim=0"],
        ["--steps", "0"],
        ["--frames", "1"],
        ["--buffer", "0"],
        ["--kind", "nobody"],
        ["--core-fps-1080p", "1e-320"],
        ["--decode-cv", "1e-320"],
        ["--seed", "-1"],
        ["--held", "own=1e10"],
        ["--held", "own=1", "--held", "own=2"],
        ["--model", "../ledgers/default/cluster"],
        ["--json", "/dev/full"],
    ]
)


def _damage(folder: Path, edits: list[tuple[int, int, str]], cluster_edit: tuple[int, str] | None) -> None:
    path = folder / "sources.csv"
    lines = path.read_text().splitlines()
    head, rows = lines[0], [line.split(",") for line in lines[1:]]
    for row, col, text in edits:
        cells = rows[row % len(rows)]
        cells[col % len(cells)] = f'"{text}"' if ("," in text or '"' in text) and '"' not in text else text
    path.write_text("\n".join([head, *[",".join(r) for r in rows]]) + "\n")
    if cluster_edit is not None:
        (table, key), value = CLUSTER_KEYS[cluster_edit[0] % len(CLUSTER_KEYS)], cluster_edit[1]
        text = (folder / "cluster.toml").read_text()
        literal = value if value not in ("", " ", "abc", "nan", "inf", "-inf") else f'"{value}"'
        text = text.replace(f"[{table}]\n", f"[{table}]\n{key} = {literal}\n", 1)
        lines = [ln for ln in text.splitlines() if not (ln.startswith(f"{key} =") and literal not in ln)]
        (folder / "cluster.toml").write_text("\n".join(lines) + "\n")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    command=COMMANDS,
    options=ODD_OPTIONS,
    edits=st.lists(
        st.tuples(st.integers(0, 4), st.integers(2, 21), st.sampled_from(ODD_NUMBERS + ODD_TEXT)), max_size=3
    ),
    cluster_edit=st.one_of(st.none(), st.tuples(st.integers(0, 10), st.sampled_from(ODD_NUMBERS))),
)
def test_every_run_exits_0_or_2_with_one_clear_line(command, options, edits, cluster_edit):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ledger"
        shutil.copytree(DEFAULT_LEDGER.path, folder)
        _damage(folder, edits, cluster_edit)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*command, "--ledger", str(folder), *options])
    message = err.getvalue()
    assert code in (0, 2), f"exit {code}: {message}"
    assert "Traceback" not in message
    assert len(message.strip().splitlines()) <= 2, message
    if code == 0:
        assert "nan" not in out.getvalue().lower().replace("nano", ""), out.getvalue()[:500]
