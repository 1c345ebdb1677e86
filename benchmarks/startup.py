"""Start-up: what a user waits for before the first line, against importing what it needs.

    python benchmarks/startup.py [--repeat 7]

``procure bill`` against ``python -c "import pandas"`` (goal ≤ 1.3×); ``procure solve --budget
100000`` on the default ledger against ``python -c "import pandas, pyomo.environ, highspy"``
(goal ≤ 1.3×); ``procure --help`` and ``--version`` against a bare ``python -c pass``.
"""

from __future__ import annotations

import argparse
import shutil

from timing import PYTHON, command, interleaved, machine, ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    procure = shutil.which("procure") or "procure"
    print(machine())
    t = interleaved(
        {
            "pandas": command([PYTHON, "-c", "import pandas"]),
            "bill": command([procure, "bill"]),
            "stack": command([PYTHON, "-c", "import pandas, pyomo.environ, highspy"]),
            "solve": command([procure, "solve", "--budget", "100000"]),
            "python": command([PYTHON, "-c", "pass"]),
            "help": command([procure, "--help"]),
            "version": command([procure, "--version"]),
        },
        args.repeat,
    )
    print(ratio("procure bill / import pandas", t["bill"], t["pandas"], "≤ 1.3x"))
    print(ratio("procure solve --budget 100000 / import pandas, pyomo, highspy", t["solve"], t["stack"], "≤ 1.3x"))
    print(ratio("procure --help / python -c pass", t["help"], t["python"]))
    print(ratio("procure --version / python -c pass", t["version"], t["python"]))


if __name__ == "__main__":
    main()
