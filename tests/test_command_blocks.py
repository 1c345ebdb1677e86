"""Every command block of README.md and docs/ runs as written and prints the figures beside it.

Each page's ``bash`` blocks run in order, line by line through bash, in a folder of their own
that holds what the pages name: ``examples/`` (a link to the repository's), the files of
``procure sample`` under the names the pages use (``cams/``, ``runs.csv``, ``my_scenarios.csv``,
``post.csv``'s ledger ``mine``, ``~/datasets/pick_place``), with ``HOME`` in that folder so that
nothing is written outside it. A line runs where it starts with ``procure`` and none of
:data:`NOT_RUN` is in it.

A figure beside a command is a number in its comment written with a decimal point, a ``%`` or
a ``$`` (``busy 34.6 %``, ``bill $6.58``, ``value 973.80``): each must be printed by the command,
to the digits written (any number of the output within half a unit of the figure's last digit;
thousands separators aside). Integers without ``%`` or ``$`` are the command's inputs, not
figures (``3 × 1080p30``, ``8 cores``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *[f"docs/{p.name}" for p in sorted((TOP / "docs").glob("*.md"))]]
#: Lines that are not run, and why: a server that runs until stopped (its pages are tested in a
#: browser, tests/interfaces/test_app.py), a placeholder host.
NOT_RUN = ("procure app", "tcp://HOST")
#: Most seconds one line may take [s].
LINE_SECONDS = 600
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
COMMENT = re.compile(r"\s{2,}#\s(.*)$")
#: A figure in a comment: a $ amount, or a number with a decimal point or followed by %.
FIGURE = re.compile(r"\$[0-9][0-9,]*(?:\.[0-9]+)?|[0-9][0-9,]*\.[0-9]+|[0-9][0-9,]*(?=\s?%)")
NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def commands(page: str) -> list[tuple[str, list[str]]]:
    """The page's command lines to run, in order, each with the figures of its comment."""
    out = []
    for block in BLOCK.findall((TOP / page).read_text(encoding="utf-8")):
        for line in block.splitlines():
            found = COMMENT.search(line)
            command = line[: found.start()] if found else line
            command = command.strip()
            if not command.startswith("procure ") or any(skip in command for skip in NOT_RUN):
                continue
            if "--pdf" in command and shutil.which("chromium") is None:
                continue
            out.append((command, FIGURE.findall(found.group(1)) if found else []))
    return out


def printed(figure: str, output: str) -> bool:
    """True where some number of ``output`` is ``figure`` to the digits it is written with."""
    text = figure.lstrip("$").replace(",", "")
    digits = len(text.split(".")[1]) if "." in text else 0
    want, half = float(text), 0.5 * 10.0**-digits
    return any(abs(float(n.replace(",", "")) - want) <= half * (1 + 1e-9) for n in NUMBER.findall(output))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with what the pages' commands read, made once."""
    root = tmp_path_factory.mktemp("made")
    env = _env(root)
    done = subprocess.run(["procure", "sample", "data"], cwd=root, env=env, capture_output=True, text=True)
    if done.returncode == 0:
        data = root / "data"
        (root / "cams").symlink_to(data / "cams")
        shutil.copy(data / "runs.csv", root / "runs.csv")
        shutil.copy(data / "scenarios.csv", root / "my_scenarios.csv")
        (root / "home" / "datasets").mkdir(parents=True)
        shutil.copytree(data / "lerobot_v3", root / "home" / "datasets" / "pick_place")
    subprocess.run(["procure", "init", "mine"], cwd=root, env=env, check=True, capture_output=True)
    return root


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(root / "home"), "COLUMNS": "120", "MPLBACKEND": "Agg"}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.parametrize("page", [p for p in PAGES if commands(p)])
def test_every_command_runs_and_prints_its_figures(page: str, made: Path, tmp_path: Path):
    work = tmp_path / "work"
    shutil.copytree(made, work, symlinks=True)
    (work / "examples").symlink_to(TOP / "examples")
    env = _env(work)
    (work / "home").mkdir(exist_ok=True)
    for command, figures in commands(page):
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                              timeout=LINE_SECONDS)  # fmt: skip
        assert done.returncode == 0, f"{page}: {command}\n{done.stderr[-2000:]}"
        missing = [f for f in figures if not printed(f, done.stdout + done.stderr)]
        assert not missing, f"{page}: {command} does not print {missing}"


def test_a_figure_is_read_to_its_digits():
    assert printed("34.6", "busy 34.6 %") and printed("$6.58", "bill │ 6.58 │")
    assert printed("1,152.08", "Value 1,152.08 own-hour") and printed("722.3", "0.0 722.34 1")
    assert not printed("722.3", "722.36") and not printed("34.6", "busy 34.5 %")
    assert FIGURE.findall("busy 34.6 %, bill $6.58 of $123.60; 3 × 1080p30, 8 cores, twin 43.9 %") == [
        "34.6", "$6.58", "$123.60", "43.9"
    ]  # fmt: skip
