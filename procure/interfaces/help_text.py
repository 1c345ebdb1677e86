"""One convention for every command's help: a summary in plain words that fits 80 columns, the
commands in the order of the work, types named ``NUMBER``, ``INTEGER``, ``FILE``, ``DIR`` and
``TEXT``, every default shown as ``[default: …]``, and examples at the end.

:func:`conventional` applies it to the commands of the ``procure`` group once, where they are
registered (:mod:`procure.interfaces.cli`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import click

#: Each command in the order of the work, with its summary in the command list and 2–4
#: examples at the end of its help.
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "bill": ("What moving one recorded hour costs, stage by stage",
             ("procure bill", "procure bill --kind twin --json", "procure bill --cores 24")),
    "solve": ("What to buy next for a budget, or the least money for a value",
              ("procure solve --budget 100000", "procure solve --budget 100k --held own=500",
               "procure solve --target 800", "procure solve --budget 100000 --samples 200")),
    "rank": ("How the sources rank by volume, share of price or value",
             ("procure rank --by volume", "procure rank --by value --budget 100000")),
    "sensitivity": ("How the plan and the bill move with the byte price",
                    ("procure sensitivity --byte-price-x 0.1 10 --steps 5",
                     "procure sensitivity --vary accelerator_usd_per_hour 1 10 --steps 5")),
    "report": ("One HTML page of the plan, to hand on", ()),
    "fit": ("Value curves fitted to your own training runs",
            ("procure fit runs.csv", "procure fit runs.csv --next --budget 100000")),
    "calibrate": ("Measure your own video: codec, bits per pixel, decode rate",
                  ("procure calibrate cams/*.mp4", "procure calibrate cams/*.mp4 --json")),
    "import": ("A LeRobot or RLDS dataset as a ledger row",
               ("procure import lerobot my_data/lerobot_v3 --json", "procure import rlds my_data/rlds --hz 5")),
    "sample": ("Sample data to try the data commands on", ()),
    "simulate": ("The pipeline run as a queue, against its closed form",
                 ("procure simulate", "procure simulate --cores 24 --decode-cv 1")),
    "app": ("The pipeline and the planner in a browser",
            ("procure app", "procure app --ledger my_ledger --port 8050")),
    "init": ("Copy the default ledger to a folder of your own, to edit",
             ("procure init my_ledger", "procure solve --ledger my_ledger --budget 100000")),
}  # fmt: skip
#: The type names the help shows, by click's.
TYPE_NAMES = {"FLOAT": "NUMBER", "PATH": "FILE", "DIRECTORY": "DIR"}


def _examples(help_text: str, examples: Iterable[str]) -> str:
    """``help_text`` with an examples block at its end (unless it has one)."""
    lines = list(examples)
    if not lines or "Examples:" in help_text:
        return help_text
    return inspect.cleandoc(help_text) + "\n\n\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _params(command: click.Command) -> None:
    """The convention on a command's options and arguments: type names and defaults shown."""
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and param.default is not None:
            param.show_default = True
        if param.metavar is None:
            name = param.type.name.upper()
            if isinstance(param.type, click.Path) and not param.type.file_okay:  # a folder's option says DIR itself
                name = "DIR"
            if name in TYPE_NAMES or name == "DIR":
                param.metavar = TYPE_NAMES.get(name, name) + ("..." if param.nargs == -1 else "")


def conventional(commands: Iterable[click.Command]) -> list[click.Command]:
    """The commands, in :data:`COMMANDS`' order (others after), each with its summary,
    examples and the convention on its options; subcommands of a group too."""
    ordered = sorted(commands, key=lambda c: list(COMMANDS).index(c.name) if c.name in COMMANDS else len(COMMANDS))
    for command in ordered:
        summary, examples = COMMANDS.get(command.name or "", ("", ()))
        if summary:
            command.short_help = summary
        command.help = _examples(command.help or "", examples)
        _params(command)
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                _params(sub)
    return ordered
