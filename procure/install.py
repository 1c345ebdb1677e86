"""Where this installation of procure comes from: its distribution's name and version, and the
command that adds an optional extra to it.

Below every wing, so that any module naming an extra (``video``, ``scale``, ``app``) gives a
command that installs this project, in a checkout or from a wheel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The distribution's name on the package index (the import name and the command are ``procure``).
DISTRIBUTION = "procure-robotics"
#: The shipped data folders: inside the installed package (``_data/NAME``), or at the top of a checkout.
SHIPPED_DATA = ("ledgers", "models")


def package_data(name: str) -> Path | None:
    """Folder of shipped data ``name`` (of :data:`SHIPPED_DATA`): inside the installed package,
    or at the top of a checkout; None where neither is there."""
    here = Path(__file__).resolve().parent  # the procure package
    for candidate in (here / "_data" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    return None


def installed_folders() -> list[Path]:
    """The folders of this installation that nothing procure does writes into: the package and
    its shipped data, resolved."""
    found = [package_data(name) for name in SHIPPED_DATA]
    return [Path(__file__).resolve().parent, *(f.resolve() for f in found if f is not None)]


def in_installation(path: Path) -> bool:
    """Whether ``path`` (resolved) lies inside one of :func:`installed_folders`."""
    real = path.resolve()
    return any(real == f or f in real.parents for f in installed_folders())


def _checkout() -> dict[str, Any] | None:
    """The ``[project]`` table of the source checkout this package is imported from, if it is
    one (a pyproject.toml beside the package naming :data:`DISTRIBUTION`), else None."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text())["project"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return None
    return project if isinstance(project, dict) and project.get("name") == DISTRIBUTION else None


def version() -> str:
    """The installed distribution's version; in a source checkout that is not installed, the
    version pyproject.toml gives (the one place it is written)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        project = _checkout()
        return str(project.get("version", "0+unknown")) if project is not None else "0+unknown"


def install_command(extra: str) -> str:
    """The ``pip install`` command that adds an optional extra (``app``, ``video``, ``scale``)
    to this installation.

    In a source checkout, the checkout with the extra (``pip install -e`` when the checkout is
    installed editable); otherwise the extra's requirements as the installed distribution
    lists them (they install whether or not the distribution is on the package index), or
    ``DISTRIBUTION[extra]`` when its metadata cannot be read.
    """
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        dist = None
    if _checkout() is not None:
        url = json.loads((dist.read_text("direct_url.json") if dist is not None else None) or "{}")
        editable = bool(url.get("dir_info", {}).get("editable"))
        return f"pip install {'-e ' if editable else ''}'{Path(__file__).resolve().parents[1]}[{extra}]'"
    marker = f'extra == "{extra}"'
    needs = [r.split(";")[0].strip() for r in (dist.requires or []) if marker in r.replace("'", '"')] if dist else []
    if needs:
        return "pip install " + " ".join(f"'{r}'" for r in needs) + f" (the extra {DISTRIBUTION}[{extra}])"
    return f"pip install '{DISTRIBUTION}[{extra}]'"
