"""The ledgers that ship with the package: never written, by any command or the app."""

from __future__ import annotations

from pathlib import Path

from .cards import default_ledger_dir


def installation_roots() -> list[Path]:
    """The folders ``procure`` never writes into: the installed package (its shipped data
    included), the shipped default ledger, and a checkout's ``ledgers/default``."""
    package = Path(__file__).resolve().parents[1]  # the procure package
    roots = [package, default_ledger_dir().resolve(), package.parent / "ledgers" / "default"]
    return [r.resolve() for r in roots]


def shipped(folder: Path | str) -> bool:
    """Whether a ledger folder (or the ``sources.csv`` it links to) is part of the installation."""
    folder = Path(folder)
    places = [folder.resolve(), (folder / "sources.csv").resolve()]
    return any(p == r or p.is_relative_to(r) for p in places for r in installation_roots())
