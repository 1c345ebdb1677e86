"""The help: ``procure`` alone prints it and succeeds."""

from __future__ import annotations

import pytest

from procure.interfaces.cli import main


def test_no_arguments_prints_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Usage: procure" in out
    assert "Commands:" in out
    assert err == ""
