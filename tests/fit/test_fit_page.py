"""The app's Fit page: shown for a ledger with runs.csv, its worker's result, its layout."""

from __future__ import annotations

import pytest

from procure import load_ledger
from procure.interfaces.pages import fit as fit_page

from .conftest import DEFAULT


def test_the_page_is_for_a_ledger_with_runs(ledger_dir):
    assert fit_page.has_runs(load_ledger(ledger_dir))
    assert not fit_page.has_runs(DEFAULT)


def test_the_worker_fits_and_draws(ledger_dir, monkeypatch):
    from procure.analyses.fit import fitting

    real = fitting.fit
    monkeypatch.setattr(fitting, "fit", lambda runs, ledger: real(runs, ledger, steps=200, burn_in=200))
    result, message = fit_page.fit_result(str(ledger_dir))
    assert result is not None, message
    png, parameters, link = result
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert parameters.headings[:3] == ("source", "parameter", "median")
    assert [c[1] for c in parameters.cells][:2] == ["saturation_hours", "exchange_rate"]
    assert [c[0] for c in link.cells] == ["p_min", "p_max", "value_scale"]
    assert "split R-hat" in message and "source 'force' is in no run" in message


def test_a_bad_runs_file_is_the_page_s_message(ledger_dir):
    (ledger_dir / "runs.csv").write_text("run,hours_twn,successes,trials\na,1,1,2\n")
    result, message = fit_page.fit_result(str(ledger_dir))
    assert result is None and "did you mean 'twin'?" in message


def test_the_layout_names_its_outputs(ledger_dir):
    pytest.importorskip("shiny")
    html = str(fit_page.page(load_ledger(ledger_dir)))
    for output in ("fit_figure", "fit_message", "fit_parameters", "fit_link"):
        assert f'id="{output}"' in html
