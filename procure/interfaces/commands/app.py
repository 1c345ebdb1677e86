"""``procure app``: the pipeline, the plan and the byte prices in a browser."""

from __future__ import annotations

from pathlib import Path

import click

from ...errors import InputError
from ..options import ledger_option
from ..terminal import say


@click.command("app")
@ledger_option
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (this machine only by default)."
)
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on.")
def app_command(ledger_dir: Path | None, host: str, port: int) -> None:
    """The lesson's widget and the planner in a browser: pipeline, plan, byte prices.

    Ctrl-C stops it (exit code 130, as for every command); a port in use, or Shiny for Python
    not installed, is one line and exit code 2.
    """
    if not 0 < port < 65536:
        raise click.BadParameter(f"{port} is invalid: must be between 1 and 65535", param_hint="'--port'")
    try:
        from ..app import serve

        serve(ledger_dir, host, port, announce=say)
    except ImportError as exc:
        raise InputError(str(exc)) from None
