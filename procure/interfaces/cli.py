"""The command line: ``procure bill | solve | rank | sensitivity | report | fit | calibrate | import | sample |
simulate | app | init``.

This module is the ``procure`` group and its entry point, :func:`main`; the commands are in
:mod:`procure.interfaces.commands`, their tables in :mod:`procure.interfaces.render`. Library
errors (:class:`procure.ProcureError`) and usage errors become one line on standard error and
exit code 2; ``--json`` prints one JSON object.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import Any

import click

from ..errors import ProcureError, system_message
from .commands.analyses import rank_command, sensitivity_command
from .commands.app import app_command
from .commands.data import calibrate_command, import_group
from .commands.fit import fit_command
from .commands.init import init_command
from .commands.pipeline import bill_command, simulate_command
from .commands.plan import solve_command
from .commands.report import report_command
from .commands.sample import sample_command
from .help_text import conventional

#: Set this environment variable to see the traceback of an internal error.
DEBUG_VARIABLE = "PROCURE_TRACEBACK"


class Interrupted(Exception):
    """Ctrl-C during a command: carried past click, which would print a blank line for it."""


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in the order they were added: the order of the work."""
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the installed distribution's version (:data:`procure.install.DISTRIBUTION`)."""
    if not value or ctx.resilient_parsing:
        return
    from ..install import version

    click.echo(f"procure, version {version()}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")  # fmt: skip
def app() -> None:
    """procure: which robot-learning hours to buy next, once moving them is paid for."""


for _command in conventional((bill_command, simulate_command, solve_command, rank_command, sensitivity_command,
                              report_command, app_command, calibrate_command, import_group, init_command, fit_command,
                              sample_command)):  # fmt: skip
    app.add_command(_command)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    0 success; 2 bad input, a usage error, or a request the program cannot meet (one line on
    standard error); 1 an internal error (one line; the traceback with ``PROCURE_TRACEBACK=1``);
    130 interrupted.
    """
    try:
        app.main(args=argv, prog_name="procure", standalone_mode=False)
    except ProcureError as exc:
        click.echo(f"procure: error: {exc}", err=True)
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt, Interrupted):
        click.echo("procure: aborted", err=True)
        return 130
    except click.exceptions.NoArgsIsHelpError as exc:  # ``procure`` alone: the help, not an error
        click.echo(exc.ctx.get_help() if exc.ctx is not None else "")
        return 0
    except click.ClickException as exc:
        click.echo(f"procure: error: {exc.format_message()}", err=True)
        return exc.exit_code or 2
    except OSError as exc:
        click.echo(f"procure: error: {system_message(exc)}", err=True)
        return 2
    except Exception as exc:
        if os.environ.get(DEBUG_VARIABLE):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        click.echo(
            f"procure: internal error: {type(exc).__name__}: {first} (run with {DEBUG_VARIABLE}=1 for the traceback)",
            err=True,
        )
        return 1
    return 0


def run() -> None:
    """The ``procure`` command: :func:`main`, then the process ends at once with its code.

    What the command wrote is flushed and the exit handlers run (:mod:`atexit`: logging, Dask,
    worker processes), but the objects it leaves are not torn down one by one: a model of
    millions of Pyomo objects (200 periods × 50 scenarios) takes seconds to free, which a user
    would wait for after the answer, or after the time limit's message.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
