"""Every example runs and prints what ``examples/expected/`` holds.

Text must match exactly; each number must match within one unit of its last printed digit
or 0.1 % (plans near a flat optimum move slightly between solver builds).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> tuple[list[str], list[str]]:
    return NUMBER.split(text), NUMBER.findall(text)


def _close(got: str, want: str) -> bool:
    g, w = float(got.replace(",", "")), float(want.replace(",", ""))
    decimals = len(want.split(".")[1]) if "." in want else 0
    return abs(g - w) <= max(10 ** (-decimals), 1e-3 * abs(w)) + 1e-12


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_example(script):
    expected = (EXAMPLES / "expected" / f"{script.stem}.txt").read_text()
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    got_lines, want_lines = run.stdout.splitlines(), expected.splitlines()
    assert len(got_lines) == len(want_lines)
    for got, want in zip(got_lines, want_lines, strict=True):
        got_text, got_nums = _numbers(got)
        want_text, want_nums = _numbers(want)
        assert [t.strip() for t in got_text] == [t.strip() for t in want_text], f"{got!r} != {want!r}"
        assert all(_close(g, w) for g, w in zip(got_nums, want_nums, strict=True)), f"{got!r} != {want!r}"


def test_every_example_has_expected_output():
    assert {p.stem for p in EXAMPLES.glob("*.py")} == {p.stem for p in (EXAMPLES / "expected").glob("*.txt")}
    assert {"seed_lesson", "what_to_buy_next", "rank_sources", "byte_price_sensitivity"} <= {
        p.stem for p in EXAMPLES.glob("*.py")
    }
