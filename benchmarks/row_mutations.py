"""Does the suite notice a wrong row? Each coefficient family of the program's rows is perturbed
in a copy of the package, and the program's tests are run against it.

    python benchmarks/row_mutations.py [--tests tests/program] [--only NAME]

A mutation is one textual change to one statement of a row (``procure/program/rows.py`` states
the coupling rows once; the model's own families are in the row builders). For each, the copy's
tests run with ``-x`` (stop at the first failure); the table gives whether any failed and which
test failed first. A mutation no test catches is a row no test pins down.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]

#: The test that this table's texts are in their files: it fails on any mutation applied, so it is
#: left out of the runs, where only a test of the program's numbers counts as catching one.
OWN_CHECK = (
    "tests/program/test_program_layout.py::test_every_row_mutation_of_the_benchmark_names_text_that_is_there_once"
)

#: (name, file, the text, its mutation): one statement of a row each, perturbed by a factor.
MUTATIONS = [
    ("mix coefficient share × 0.9", "procure/program/rows.py",
     "(np.asarray(members, dtype=float) - share)", "(np.asarray(members, dtype=float) - 0.9 * share)"),
    ("mix right-hand side × 0.9", "procure/program/rows.py",
     "return coef, -np.sum(coef * np.asarray(held, dtype=float), axis=-1)",
     "return coef, -0.9 * np.sum(coef * np.asarray(held, dtype=float), axis=-1)"),
    ("capacity right-hand side × 1.01", "procure/program/rows.py",
     "return float(limit - np.asarray(use, dtype=float) @ np.asarray(held, dtype=float))",
     "return 1.01 * float(limit - np.asarray(use, dtype=float) @ np.asarray(held, dtype=float))"),
    ("budget row cost × 1.01", "procure/program/rows.py",
     "A[:, 0], b[:, 0] = p.cost, budget", "A[:, 0], b[:, 0] = 1.01 * p.cost, budget"),
    ("scenario capacity room read × 1.01", "procure/program/model/scenario_rows.py",
     "<= float(rows.b[k, row[r]])", "<= 1.01 * float(rows.b[k, row[r]])"),
    ("period mix right-hand side × 0.9", "procure/program/model/period_rows.py",
     "p.max_share[key], pp.age[0, t] * held)", "p.max_share[key], 0.9 * pp.age[0, t] * held)"),
    ("period capacity limit × 1.01", "procure/program/model/period_rows.py",
     "limit = float(pp.capacity[r][t])", "limit = 1.01 * float(pp.capacity[r][t])"),
    ("period capacity use × 0.9", "procure/program/model/period_rows.py",
     "used = np.tile(use, t + 1)", "used = 0.9 * np.tile(use, t + 1)"),
    ("purchase options' capacity use × 0.9", "procure/program/model/infra_rows.py",
     "terms = [Terms(\"q\", nz, use[nz])]", "terms = [Terms(\"q\", nz, 0.9 * use[nz])]"),
    ("a row made from arrays handed over at its coefficients × 0.999", "procure/program/model/array_rows.py",
     "coefs.append(np.asarray(g.coef, dtype=float))", "coefs.append(0.999 * np.asarray(g.coef, dtype=float))"),
    ("a variable's first column one further", "procure/program/model/array_rows.py",
     "self.first[var.local_name] = col", "self.first[var.local_name] = col + 1"),
    ("scenario mix row in scenario 0 only", "procure/program/model/scenario_rows.py",
     "coef = rows.A[k, mix[g]]", "coef = rows.A[0, mix[g]]"),
    ("recourse later price in the money rows × 1.05", "procure/program/model/scenario_rows.py",
     "later = [price_x * _m.later[k, i] if later_ok[i] else 0.0 for i in range(n)]",
     "later = [1.05 * price_x * _m.later[k, i] if later_ok[i] else 0.0 for i in range(n)]"),
    ("wait-and-see mix rows at the mean rates", "procure/program/solve/wait_and_see.py",
     "rows = scenario_rows(base, sp.rate, float(base.budget or 0.0), capacity_rows_of(base))",
     "rows = scenario_rows(base, np.broadcast_to(sp.rate.mean(axis=0), sp.rate.shape), float(base.budget or 0.0), "
     "capacity_rows_of(base))"),
    ("model bound at the range a row holds (derived bound × 1.0)", "procure/program/numbers/bounds.py",
     "DERIVED_BOUND = 1.5", "DERIVED_BOUND = 1.0"),
    ("on/off credit row's chord at the range, not the bound", "procure/program/model/integer_rows.py",
     "_e, at_top = c.value_of(np.where(np.isfinite(c.bound), c.bound, 0.0))",
     "_e, at_top = c.value_of(np.where(np.isfinite(c.upper), c.upper, 0.0))"),
    ("wait-and-see later price × 1.05", "procure/program/solve/wait_and_see.py",
     "later = np.where(sp.later_ok[None, :], sp.recourse_price_x * sp.later_cost, np.inf)",
     "later = np.where(sp.later_ok[None, :], 1.05 * sp.recourse_price_x * sp.later_cost, np.inf)"),
]  # fmt: skip


def run(name: str, file: str, old: str, new: str, tests: list[str]) -> tuple[str, str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(TOP / "procure", copy / "procure")
        shutil.copytree(TOP / "tests", copy / "tests")
        shutil.copytree(TOP / "ledgers", copy / "ledgers")
        shutil.copytree(TOP / "models", copy / "models")
        shutil.copy(TOP / "pyproject.toml", copy / "pyproject.toml")
        path = copy / file
        text = path.read_text()
        if text.count(old) != 1:
            return "not applied", f"{old!r} is not once in {file}", 0.0
        path.write_text(text.replace(old, new))
        env = {**os.environ, "PYTHONPATH": str(copy), "MPLBACKEND": "Agg"}
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", f"--deselect={OWN_CHECK}", *tests],
            cwd=copy, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
        failed = [line for line in out.stdout.splitlines() if line.startswith("FAILED")]
        if out.returncode == 0:
            return "survived", "", seconds
        return "caught", failed[0].split(" ", 1)[1].split(" - ")[0] if failed else f"exit {out.returncode}", seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", nargs="+", default=["tests/program"])
    parser.add_argument("--only", default=None, help="run the mutations whose name contains this")
    args = parser.parse_args()
    print("| mutation | outcome | first failing test | seconds |\n|---|---|---|---|")
    for name, file, old, new in MUTATIONS:
        if args.only and args.only not in name:
            continue
        outcome, first, seconds = run(name, file, old, new, args.tests)
        print(f"| {name} | {outcome} | {first} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
