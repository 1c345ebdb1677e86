"""``procure fit --next`` (what to measure next: EVPI and each number's EVPPI) against the fit
alone, each run as the ``procure`` command on the runs ``procure sample`` writes.

    python benchmarks/fit_next.py [--repeat 5]

Both commands fit the same runs with the same seed (the sampler's default steps); ``--next``
then values the posterior's draws (EVPI over them, and each fitted number's EVPPI by groups of
draws, each group certified by its expected-value dual). Interleaved, repeated; prints the
median ratio with its min–max. Goal: at most 2x.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import command, interleaved, machine, ratio

CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    a = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="procure-fit-next-") as folder:
        subprocess.run([*CLI, "sample", str(Path(folder) / "data")], check=True, stdout=subprocess.DEVNULL)
        runs = str(Path(folder) / "data" / "runs.csv")
        times = interleaved({"fit": command([*CLI, "fit", runs]), "fit --next": command([*CLI, "fit", runs, "--next"])},
                            a.repeat)  # fmt: skip
    print(machine())
    print(ratio("fit --next against the fit alone", times["fit --next"], times["fit"], "<= 2x"))


if __name__ == "__main__":
    main()
