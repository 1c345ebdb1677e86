"""Ranking sources, sensitivity to byte prices (and other inputs), ranging, and the plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import DEFAULT_LEDGER, seed_state

from procure.analyses.rank import RANK_COLUMNS, rank
from procure.analyses.sensitivity import RANGING_LIMITS, SWEEP_COLUMNS, _signature, byte_price_range, sweep
from procure.interfaces import plots
from procure.interfaces.cli import main
from procure.ledger import Ledger
from procure.program.numbers.problem import from_ledger
from procure.program.solve.program import Program
from procure.program.solve.program import solve_problem as solve


def groups(table) -> list[set[str]]:
    return [set(g["source"]) for _, g in table.groupby("rank", sort=True)]


def test_rank_reproduces_the_seed():
    """Seed §6: by bytes force > own = twin > older arm > sim; by price force > own > twin =
    older arm > sim; by transport share twin > own > force > older arm."""
    assert groups(rank(DEFAULT_LEDGER, "volume")) == [{"force"}, {"own", "twin"}, {"older_arm"}, {"sim"}]
    assert groups(rank(DEFAULT_LEDGER, "price")) == [{"force"}, {"own"}, {"twin", "older_arm"}, {"sim"}]
    assert groups(rank(DEFAULT_LEDGER, "share"))[:4] == [{"twin"}, {"own"}, {"force"}, {"older_arm"}]


def test_rank_columns_and_plan():
    table = rank(DEFAULT_LEDGER, "value", budget=100_000)
    assert set(RANK_COLUMNS) <= set(table.columns)
    assert {"plan_hours", "plan_gb", "plan_value"} <= set(table.columns)
    assert (np.diff(table["plan_value"].to_numpy()) <= 0).all()  # ranked by value in the plan
    own = table.set_index("source").loc["own"]
    assert own["cost_per_useful_hour"] == pytest.approx(
        (123.60 + own["transport_usd_per_hour"]) / own["effective_rate"]
    )


def test_rank_cli(capsys):
    assert main(["rank", "--by", "volume", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["source"] for r in out["rows"]][:1] == ["force"] and all("kind" in r for r in out["rows"])
    assert main(["rank", "--by", "nonsense"]) == 2
    assert "Invalid value for '--by'" in capsys.readouterr().err


def test_seed_byte_price_states():
    """Seed §4: byte prices ten times higher, $49.4 with idle accelerators 3 % of it; a tenth, $2.31, 66 %."""
    dear, cheap = seed_state(byte_price_x=10), seed_state(byte_price_x=0.1)
    assert round(dear["bill_usd"], 1) == 49.4 and round(100 * dear["idle_usd"] / dear["bill_usd"]) == 3
    assert round(cheap["bill_usd"], 2) == 2.31 and round(100 * cheap["idle_usd"] / cheap["bill_usd"]) == 66


def test_plan_value_never_rises_with_byte_price():
    table = sweep(DEFAULT_LEDGER, "byte_price_x", 0.1, 10.0, 9, budget=100_000, tolerance=1e-6)
    values = table.groupby("x", sort=True)["plan_value"].first().to_numpy()
    assert (np.diff(values) <= 2e-6 * values[:-1]).all()
    assert values[0] > values[-1]
    assert list(table.columns) == list(SWEEP_COLUMNS)


def test_sweep_reuses_the_model_and_agrees_with_fresh_solves():
    table = sweep(DEFAULT_LEDGER, "byte_price_x", 0.5, 8.0, 3, budget=100_000, tolerance=1e-6)
    for x, part in table.groupby("x"):
        fresh = solve(from_ledger(DEFAULT_LEDGER, budget=100_000).with_byte_price_x(x), tolerance=1e-6)
        assert part["plan_value"].iloc[0] == pytest.approx(fresh.value, rel=2e-6)


@pytest.mark.parametrize("parameter", ["budget", "accelerator_usd_per_hour", "core_usd_per_hour", "params"])
def test_other_inputs(parameter):
    lo, hi = {
        "budget": (1e4, 1e5),
        "accelerator_usd_per_hour": (1.0, 5.0),
        "core_usd_per_hour": (0.02, 0.2),
        "params": (25e6, 411e6),
    }[parameter]
    table = sweep(DEFAULT_LEDGER, parameter, lo, hi, 2, budget=50_000, tolerance=1e-6)
    ends = table.groupby("x", sort=True)["plan_value"].first()
    if parameter == "budget":
        assert ends.iloc[1] > ends.iloc[0]
    else:
        # Dearer moving, or a larger model that takes more accelerator-hours an hour, never adds value.
        assert ends.iloc[1] < ends.iloc[0]
    # Each end equals a fresh solve of the ledger with the input set there.
    for x, end in zip((lo, hi), ends, strict=True):
        if parameter == "budget":
            fresh = from_ledger(DEFAULT_LEDGER, budget=x)
        else:
            fresh = from_ledger(DEFAULT_LEDGER, budget=50_000, cluster=DEFAULT_LEDGER.cluster.replace(**{parameter: x}))
        assert end == pytest.approx(solve(fresh, tolerance=1e-6).value, rel=2e-6)


def _shape_checker(problem):
    program = Program(problem, tolerance=1e-6)

    def shape(m):
        program.set_costs(problem.with_byte_price_x(m).cost)
        return _signature(program.solve())

    return shape


def test_byte_price_range_brackets_a_change_of_shape():
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000)
    lo, hi = byte_price_range(problem)
    assert lo == RANGING_LIMITS[0] < 1 < hi  # the default plan keeps its shape down to the search limit
    shape = _shape_checker(problem)
    here = shape(1.0)
    assert shape(lo) == here
    assert shape(hi) == here and shape(hi * 1.001) != here


def test_byte_price_range_lower_end_inside_the_search_range():
    """Twin at $50/h is not bought at the ledger's byte price but is once bytes are cheap enough."""
    rows = DEFAULT_LEDGER.sources.copy()
    rows.loc[rows["source"] == "twin", "price_usd_per_hour"] = 50.0
    problem = from_ledger(Ledger(rows, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), budget=100_000)
    lo, hi = byte_price_range(problem)
    assert RANGING_LIMITS[0] < lo < 1 < hi
    shape = _shape_checker(problem)
    here = shape(1.0)
    assert here[0][1] == "zero"
    # Near the change twin's marginal value per dollar equals λ, so a plan within the solve's
    # tolerance may buy it or not: the change is located within 2 %, not to the last digit.
    assert shape(lo * 1.02) == here
    below = shape(lo / 1.02)
    assert below != here and below[0][1] == "between"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--byte-price-x", "0", "1"], "LO = 0 is invalid: must be > 0"),
        (["--byte-price-x", "-1", "1"], "LO = -1 is invalid: must be > 0"),
        (["--byte-price-x", "2", "1"], "HI = 1 is invalid: must be ≥ LO (2)"),
        (["--steps", "1"], "'--steps': 1 is invalid: must be ≥ 2"),
        (["--vary", "gpu_colour", "1", "2"], "'gpu_colour' is not an input that can vary"),
        (["--byte-price-x", "1", "2", "--vary", "budget", "1", "2"], "give --byte-price-x or --vary, not both"),
    ],
)
def test_sensitivity_bad_input(args, message, capsys):
    assert main(["sensitivity", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_sensitivity_cli(tmp_path, capsys):
    csv, plot = tmp_path / "s.csv", tmp_path / "s.png"
    assert (
        main(
            [
                "sensitivity",
                "--byte-price-x",
                "0.1",
                "10",
                "--steps",
                "3",
                "--json",
                "--csv",
                str(csv),
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert len(out["rows"]) == 3 * 5
    for key in (
        "byte_price_x",
        "source",
        "hours",
        "purchase_usd",
        "transport_usd",
        "value",
        "plan_value",
        "lambda",
        "idle_share",
    ):
        assert key in out["rows"][0]
    assert plot.read_bytes()[:4] == b"\x89PNG" and csv.read_text().startswith("parameter,x,byte_price_x")


def test_solve_ranging_and_plot(tmp_path, capsys):
    plot = tmp_path / "v.svg"
    assert main(["solve", "--budget", "100000", "--ranging", "--plot", str(plot), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lo, hi = out["byte_price_range"]
    assert lo <= 1 <= hi
    assert "dotted: slope" in plot.read_text()


def test_plots(tmp_path):
    from procure import transport
    from procure.ledger import variant

    figs = {
        "bill.png": plots.bill_split(transport(DEFAULT_LEDGER.sources, DEFAULT_LEDGER.cluster)),
        "busy.svg": plots.busy_vs_cores(variant(DEFAULT_LEDGER)[0]),
    }
    for name, fig in figs.items():
        path = plots.save(fig, tmp_path / name)
        assert path.stat().st_size > 1000
    assert main(["bill", "--plot", str(tmp_path / "b.png")]) == 0
    assert main(["rank", "--plot", str(tmp_path / "r.png")]) == 0
    assert (tmp_path / "b.png").exists() and (tmp_path / "r.png").exists()
