"""The help: ``procure`` alone prints it and succeeds."""

from __future__ import annotations

import json
import re

import pytest

from procure.interfaces.cli import main


def test_no_arguments_prints_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Usage: procure" in out
    assert "Commands:" in out
    assert err == ""


@pytest.mark.parametrize(
    ("text", "dollars"),
    [("100000", 1e5), ("100,000", 1e5), ("$100,000", 1e5), ("100k", 1e5), ("100K", 1e5), ("1.5M", 1.5e6),
     ("$2.5m", 2.5e6), ("2.5e5", 2.5e5), ("$ 1,234.50", 1234.5), ("0.5b", 5e8)],
)  # fmt: skip
def test_an_amount_of_money_as_people_write_it(text, dollars):
    from procure.interfaces.money import parse_money

    assert parse_money(text) == pytest.approx(dollars, rel=1e-15)


@pytest.mark.parametrize("text", ["100q", "1,00,000", "$", "k", "10 000", "1.5MM", "100,00", "$-"])
def test_what_is_no_amount_of_money(text):
    from procure.interfaces.money import parse_money

    assert parse_money(text) is None


def test_the_budget_takes_money_as_people_write_it(capsys):
    assert main(["solve", "--budget", "100k", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["solve", "--budget", "$100,000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == plain["value"]
    assert plain["budget"] == 100_000.0
    assert main(["solve", "--budget", "100q"]) == 2
    err = capsys.readouterr().err
    assert "'100q' is not an amount of money" in err and "100k" in err and "Traceback" not in err
    assert main(["solve", "--budget", "nan"]) == 2
    assert "budget" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "near"),
    [(["bill", "--kind", "twn"], "did you mean 'twin'?"),
     (["solve", "--budget", "1000", "--held", "owm=500"], "did you mean 'own'?"),
     (["solve", "--budget", "1000", "--max-share", "simm=0.1"], "did you mean 'sim'?")],
)  # fmt: skip
def test_a_name_close_to_a_source_or_kind_is_suggested(argv, near, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert near in err and len(err.strip().splitlines()) == 1


WORK_ORDER = ["bill", "solve", "rank", "sensitivity", "report", "fit", "calibrate", "import", "sample", "simulate",
              "app", "init"]  # fmt: skip


def test_the_commands_are_listed_in_the_order_of_the_work_with_whole_summaries(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = out.split("Commands:", 1)[1].strip().splitlines()
    assert [line.split()[0] for line in listed] == WORK_ORDER
    assert not any(line.rstrip().endswith("...") for line in listed)  # no summary cut short
    assert all(len(line) <= 80 for line in out.splitlines())


@pytest.mark.parametrize("command", WORK_ORDER)
def test_every_commands_help_ends_with_examples_in_80_columns(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    examples = out.split("Examples:", 1)[1].split("Options:", 1)[0].strip().splitlines()
    assert 2 <= len(examples) <= 4 and all(line.strip().startswith("procure ") for line in examples)
    assert all(len(line) <= 80 for line in out.splitlines())
    assert not re.search(r"(--[\w-]+|\[?[A-Z]+\]?) (FLOAT|PATH)\b", out)  # types read NUMBER, FILE, DIR


def test_the_library_names_its_own_arguments_and_the_command_its_options(capsys):
    import procure
    from procure.errors import InputError

    with pytest.raises(InputError, match=r"give exactly one \(budget=B or target=V\)"):
        procure.solve(budget=100, target=5)
    assert main(["solve", "--budget", "100", "--target", "5"]) == 2
    assert "give exactly one (--budget B or --target V)" in capsys.readouterr().err


def test_every_folder_reads_dir_in_every_help(capsys):
    # a ledger folder and a dataset folder are DIR wherever they are asked for, subcommands too
    from procure.interfaces.cli import app as cli

    def helps(group, path):
        for name, command in getattr(group, "commands", {}).items():
            yield [*path, name], command
            yield from helps(command, [*path, name])

    seen = 0
    for path, command in helps(cli, []):
        if getattr(command, "commands", None):
            continue
        assert main([*path, "--help"]) == 0
        out = capsys.readouterr().out
        options = out.split("Options:", 1)[1]
        if "--ledger" in options:
            assert re.search(r"--ledger DIR\b", options), path
            seen += 1
        if path[0] == "import":
            assert out.startswith(f"Usage: procure import {path[1]} [OPTIONS] DIR\n"), path
    assert seen >= 9  # the commands that read or write a ledger
