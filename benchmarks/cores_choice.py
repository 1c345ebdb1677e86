"""A choice of cores and formats against a plain solve, and the plan by one model against the
plan by one program per count.

    python benchmarks/cores_choice.py [--repeat 5] [--counts 8-32]

Side by side in one run (interleaved, repeated), on the shipped default ledger at $100,000:

* ``procure solve --budget 100000 --json``, the plain solve, as the command;
* the same with ``--formats recorded,model_side,decoded --cores-choices 8-32``, as the command:
  every count's options priced, each count's program solved alone, the plan the best of them
  with its certificate (``procure.analyses.infra.solve_infrastructure``);
* in the process, the same request's solve alone (:func:`procure.solve`);
* in the process, what the choice was solved by before: the one model with the count as
  binaries (one ``Program`` over every count's options), then each other count's program alone
  for its figure, each starting from the one model's cuts;
* in the process, the one model with the count as binaries alone, without any count's figure.

Each ratio is the median of the per-repeat ratios with its min–max. Goal: the choice at most
1.5× the plain solve, as the command. The values of both ways of solving the choice are
printed: each is certified within the tolerance, so they agree within it.
"""

from __future__ import annotations

import argparse
import sys

from timing import command, interleaved, machine, ratio

import procure
from procure.analyses.infra import at_count, infra_request, parse_cores
from procure.ledger import load_ledger
from procure.program import from_ledger
from procure.program.solve.program import Program

CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]
FORMATS = ["recorded", "model_side", "decoded"]
BUDGET = 100_000.0


def one_model_then_each(counts: list[float]) -> tuple[float, dict[str, float]]:
    """The plan of the one model with the count as binaries, then each other count alone from
    its cuts: the plan's value and each count's."""
    ledger = load_ledger()
    inf = infra_request(from_ledger(ledger, budget=BUDGET), ledger, formats=FORMATS, cores_choices=counts)
    assert inf is not None
    program = Program(inf)
    plan = program.solve()
    cuts = program.built.cuts()
    assert plan.infrastructure is not None
    chosen = plan.infrastructure["cores_per_accelerator"]
    values = {f"{chosen:g}": plan.value}
    for count in inf.cores.tolist():
        if count != chosen:
            values[f"{count:g}"] = Program(at_count(inf, count), cuts=cuts).solve().value
    return plan.value, values


def one_model_alone(counts: list[float]) -> float:
    """The plan's value from the one model with the count as binaries, no count's figure."""
    ledger = load_ledger()
    inf = infra_request(from_ledger(ledger, budget=BUDGET), ledger, formats=FORMATS, cores_choices=counts)
    assert inf is not None
    return Program(inf).solve().value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--counts", default="8-32", help="Cores counts to choose among (default 8-32).")
    a = parser.parse_args()
    counts = parse_cores(a.counts)
    plain = [*CLI, "solve", "--budget", f"{BUDGET:g}", "--json", "-"]
    choice = [*plain, "--formats", ",".join(FORMATS), "--cores-choices", a.counts]
    kept: dict[str, object] = {}
    times = interleaved(
        {
            "plain solve (command)": command(plain),
            "choice (command)": command(choice),
            "choice, each count alone (in process)": lambda: kept.__setitem__(
                "each", procure.solve(budget=BUDGET, formats=FORMATS, cores_choices=counts)
            ),
            "choice, one model then each other count (in process)": lambda: kept.__setitem__(
                "one", one_model_then_each(counts)
            ),
            "one model alone (in process)": lambda: kept.__setitem__("alone", one_model_alone(counts)),
        },
        a.repeat,
    )
    print(machine())
    print(f"{len(counts)} counts ({a.counts}), formats {', '.join(FORMATS)}, ${BUDGET:,.0f}")
    for name, t in times.items():
        print(f"  {name}: median {sorted(t)[len(t) // 2]:.3f} s (min {min(t):.3f}, max {max(t):.3f})")
    print("  " + ratio("choice / plain solve, as commands", times["choice (command)"],
                       times["plain solve (command)"], "<= 1.5x"))  # fmt: skip
    print("  " + ratio("one model then each other count / each count alone",
                       times["choice, one model then each other count (in process)"],
                       times["choice, each count alone (in process)"]))  # fmt: skip
    print("  " + ratio("one model alone / each count alone", times["one model alone (in process)"],
                       times["choice, each count alone (in process)"]))  # fmt: skip
    each = kept["each"]
    one_value, one_values = kept["one"]  # type: ignore[misc]
    info = each.infrastructure  # type: ignore[attr-defined]
    print(f"  plan, each count alone: value {each.value:,.4f} (bound {each.value_upper_bound:,.4f}) at "  # type: ignore[attr-defined]
          f"{info['cores_per_accelerator']:g} cores; one model: value {one_value:,.4f}; "
          f"one model alone: {kept['alone']:,.4f}")  # fmt: skip
    worst = max(abs(info["cores_values"][k] - v) / abs(v) for k, v in one_values.items())
    print(f"  each count's value, the two ways: largest relative difference {worst:.1e}")


if __name__ == "__main__":
    main()
