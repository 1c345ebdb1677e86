"""``procure sample DIR``: sample data to try the commands that read a team's own data on.

Writes (:func:`procure.analyses.sample.write_sample`) clips of two cameras, a LeRobot v3.0
dataset, an RLDS dataset, training runs and scenarios, made from synthetic frames, into a new
(or empty) folder, all or nothing; prints each with the command that reads it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..terminal import say


@click.command("sample")
@click.argument("folder", type=click.Path(path_type=Path), metavar="DIR")
def sample_command(folder: Path) -> None:
    """Write sample data to try the data commands on: clips of two cameras, a LeRobot v3.0
    dataset, an RLDS dataset, training runs and scenarios, made from synthetic frames, into
    DIR (new or empty).

    \b
    Examples:
      procure sample my_data
      procure calibrate my_data/cams/*.mp4
      procure import lerobot my_data/lerobot_v3 --json
    """
    from ...analyses.sample import write_sample

    written = write_sample(folder)
    say(f"Wrote sample data to {folder}:")
    for what, command in written:
        say(f"  {what:<14} {command}")
