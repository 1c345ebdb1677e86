"""The Plan page's held hours: the boxes, and saving them to the ledger.

Each session reads the ledger when it opens (:class:`.parts.LedgerFiles`) and remembers what
it read. "Save held hours" writes only the boxes the user changed since then, and only if no
one else changed those cells meanwhile (:func:`procure.ledger.edit.update_cells`: every value
checked before any is written, the file replaced once). A blank box, or one a browser cannot
hold (1e400), is refused, never saved as 0.

The app never writes into the installation: the shipped default ledger (inside the installed
package, or a checkout's ``ledgers/default``) is refused, with how to make a ledger of one's
own — ``procure init DIR``, or the page's "Copy the default ledger" action, after which the
session saves to the copy.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...defaults import TABLE_ROWS
from ...errors import ProcureError
from ...ledger.shipped import shipped
from ..tables import visible
from .parts import Refused, number, sent, shown

if TYPE_CHECKING:
    from ...ledger import Ledger

#: Held-hours boxes the page shows at most (the first sources of the ledger); the others keep
#: the ledger's values.
HELD_BOXES = TABLE_ROWS
#: The ledger column the boxes edit.
COLUMN = "held_hours"


def editable(ledger: Ledger) -> list[str]:
    """The sources that have a held-hours box: the first :data:`HELD_BOXES`."""
    return [str(name) for name in ledger.sources["source"].iloc[:HELD_BOXES]]


def refusal(folder: Path) -> str:
    """What the page says instead of saving into the shipped default ledger."""
    return (
        f"{folder} is the shipped default ledger: the app does not write into it. Make a ledger of your own "
        "with `procure init DIR` and start `procure app --ledger DIR`, or copy it below and save there."
    )


def boxes(ledger: Ledger) -> list[Any]:
    """The held-hours boxes (and a line saying how many sources have none)."""
    from shiny import ui

    names = editable(ledger)
    out = [
        ui.input_numeric(f"held_{i}", f"held h: {visible(name)}", shown(float(h)), min=0)
        for i, (name, h) in enumerate(zip(names, ledger.sources[COLUMN].iloc[: len(names)], strict=True))
    ]
    if len(ledger.sources) > len(names):
        more = len(ledger.sources) - len(names)
        out.append(ui.p(f"The first {len(names):,} sources; the other {more:,} keep the ledger's held hours.",
                        class_="procure-note"))  # fmt: skip
    return out


def save_controls(folder: Path) -> list[Any]:
    """The save button, its message, and for the shipped ledger the copy action."""
    from shiny import ui

    out = [ui.input_action_button("save", "Save held hours to the ledger"), ui.output_text("save_message")]
    if shipped(folder):
        out += [
            ui.input_text("copy_to", "Copy the default ledger to (a new folder)", placeholder="~/procure-ledger"),
            ui.input_action_button("copy", "Copy the default ledger there"),
        ]
    return out


def read_boxes(input: Any, names: list[str]) -> dict[str, float]:
    """The boxes' values by source, each checked.

    Raises
    ------
    Refused
        A blank box, or one out of the ledger's range, naming its source.
    """
    from ...ledger.schema import MOST_HOURS

    return {
        name: float(
            number(input[f"held_{i}"](), f"held h of {visible(name)!r}", high=MOST_HOURS, field=f"held_{i}") or 0.0
        )
        for i, name in enumerate(names)
    }


def _save(folder: Path, changes: dict[str, dict[str, float]], seen: dict[str, dict[str, float]]) -> tuple[bool, str]:
    from ...ledger.edit import update_cells

    try:
        path = update_cells(folder, changes, seen)
    except (ProcureError, OSError) as exc:
        return False, f"Not saved: {visible(exc)}"
    return True, f"Saved the held hours of {', '.join(visible(n) for n in changes)} to {visible(path)}"


def server(input: Any, ledger: Ledger) -> None:
    """Register the saving of the held hours in the running session."""
    from shiny import reactive
    from shiny import render as shiny_render

    names = editable(ledger)
    read = {name: float(h) for name, h in zip(ledger.sources["source"], ledger.sources[COLUMN], strict=True)}
    seen = reactive.value({name: read[name] for name in names})
    folder = reactive.value(Path(ledger.path))
    said = reactive.value("")

    @reactive.extended_task
    async def saving(where: Path, changes: dict[str, dict[str, float]],
                     before: dict[str, dict[str, float]]) -> tuple[bool, str, dict[str, dict[str, float]]]:  # fmt: skip
        ok, message = await asyncio.to_thread(_save, where, changes, before)
        return ok, message, changes

    @reactive.effect
    @reactive.event(input.save)
    def _ask() -> None:
        where = folder()
        if shipped(where):
            said.set(refusal(where))
            return
        try:
            now = read_boxes(input, names)
        except Refused as exc:
            said.set(f"Not saved: {exc}")
            return
        was = seen()
        changed = {name: {COLUMN: hours} for name, hours in now.items() if hours != was[name]}
        if not changed:
            said.set("Nothing to save: no held hours changed since this page read the ledger.")
            return
        said.set("Saving …")
        saving.invoke(where, changed, {name: {COLUMN: was[name]} for name in changed})

    @reactive.effect
    def _saved() -> None:
        if saving.status() != "success":
            return
        ok, message, changes = saving.value()
        said.set(message)
        if ok:
            with reactive.isolate():
                seen.set({**seen(), **{name: cells[COLUMN] for name, cells in changes.items()}})

    @shiny_render.text
    def save_message() -> str:
        return said()

    if not shipped(ledger.path):
        return  # the copy action is the shipped ledger's only: a forged "copy" does nothing

    @reactive.extended_task
    async def copying(target: str) -> tuple[Path | None, str, dict[str, float]]:
        return await asyncio.to_thread(_copy, target, names)

    @reactive.effect
    @reactive.event(input.copy)
    def _ask_copy() -> None:
        target = input.copy_to()
        if not isinstance(target, str) or not target.strip():
            said.set("Not copied: give the folder to copy the default ledger to")
            return
        copying.invoke(target.strip())

    @reactive.effect
    def _copied() -> None:
        status = copying.status()
        if status == "error":
            said.set("Not copied: the copy failed unexpectedly; nothing changed in this page")
            return
        if status != "success":
            return
        made, message, held = copying.value()
        said.set(message)
        if made is not None:
            folder.set(made)
            with reactive.isolate():  # what the new copy holds is what a save there starts from
                seen.set({**seen(), **held})


def _held_in(folder: Path, names: list[str]) -> dict[str, float]:
    """The held hours of those of ``names`` the ledger in ``folder`` records [h]."""
    from ...ledger import load_ledger

    s = load_ledger(folder).sources
    held = {str(name): float(h) for name, h in zip(s["source"], s[COLUMN], strict=True)}
    return {name: held[name] for name in names if name in held}


def copy_target(target: str) -> Path:
    """The folder the page may copy the default ledger to: ``target`` (``~`` expanded, relative
    to the current folder), if it lies under the current folder or the user's home once links
    are followed and ``..`` is resolved, or is a folder that exists and is empty. A page that
    anyone can reach on the app's address must not make folders elsewhere (``/etc/...`` as
    root). A current folder or home that is the file system's root (a service started in
    ``/``) does not count: every folder lies under it.

    Raises
    ------
    Refused
        Anywhere else, or a name that is no folder's (a NUL byte, an unknown ``~user``), naming
        the folder and what is allowed.
    """
    try:
        folder = Path(target).expanduser()
        here = Path.cwd().resolve()
        roots = [r for r in (here, Path.home().resolve()) if r != Path(r.anchor)]
        resolved = (here / folder).resolve()
        if any(resolved == r or r in resolved.parents for r in roots):
            return folder
        if resolved.is_dir() and not any(resolved.iterdir()):
            return folder
    except (ValueError, RuntimeError, KeyError) as exc:  # a NUL byte; no home known for ~user
        raise Refused(f"{sent(target)} is not a folder this page can copy to ({visible(exc)})") from None
    except OSError as exc:  # a folder that cannot be listed
        raise Refused(f"{sent(target)}: {visible(exc.strerror or exc)}") from None
    under = " or ".join(f"under {visible(str(r))}" for r in roots)
    give = f"a folder {under}, or an empty folder that exists" if under else "an empty folder that exists"
    raise Refused(f"{sent(str(folder))} is outside this folder and your home: give {give}")


def _copy(target: str, names: list[str]) -> tuple[Path | None, str, dict[str, float]]:
    """Copy the default ledger to ``target`` (:func:`copy_target`); returns the folder (None if
    not copied), what the page says, and the held hours of ``names`` the copy holds [h]."""
    from ..commands.init import copy_default_ledger

    try:
        folder = copy_target(target)
        copy_default_ledger(folder)
        held = _held_in(folder, names)
    except Refused as exc:
        return None, f"Not copied: {exc}", {}
    except (ProcureError, OSError) as exc:
        return None, f"Not copied: {visible(exc)}", {}
    return folder, (f"Copied the default ledger to {visible(folder)}: this page now saves there; next time start "
                    f"`procure app --ledger {visible(folder)}`."), held  # fmt: skip
