"""Sphinx configuration of procure's documentation: the design pages and an API reference built
from the numpydoc docstrings of every module of the package.

Build it, with every warning an error (what CI runs)::

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html

Nitpicky mode (``-n``) makes every cross-reference that does not resolve a warning, so a
``:func:``, ``:class:``, ``:mod:``, ``:data:`` or ``:attr:`` naming a procure object that no
longer exists fails the build. A name is looked up as Python would look it up in the module of
the docstring (re-exports and imports followed to the definition). Names outside procure (the
standard library, numpy, pandas, Pyomo, HiGHS, click, Shiny, …) are not linked: there is no
network for their inventories, so they are left as text.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import typing
import warnings
from pathlib import Path

import numpydoc.numpydoc

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP))
os.environ.setdefault("MPLBACKEND", "Agg")

import procure  # noqa: E402

project = "procure"
author = "procure contributors"
copyright = "procure contributors"
release = version = procure.__version__

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "alabaster"
html_static_path: list[str] = []

# The markdown pages: headings get anchors, so ``[…](certification.md#hours-not-only-value)``
# resolves. No dollar math: the pages write prices with "$".
myst_heading_anchors = 3

# One page per module of procure, written by _write_module_pages below from a walk of the package:
# a new module gets its page with no edit here.
API_DIR = Path(__file__).parent / "_api"

# Each object is documented once, in the module that defines it: a package's re-exports are
# resolved to that definition (see _resolve_procure_name below).
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "ignore-module-all": True,
}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# numpydoc renders the sections; the validation flags sections it does not know, sections out
# of order, directives without their two colons, and documented parameters the signature lacks.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = False
numpydoc_validation_checks = {"GL06", "GL07", "GL10", "PR02", "PR03", "PR10"}

nitpicky = True
# Names outside procure, written with their package (or its usual alias): their documentation is
# not built here. A name that Python finds outside procure from the module of the docstring
# (``Path``, ``Figure``, ``Console``, ``float``) is left as text by _resolve_procure_name below.
_OUTSIDE = (
    "numpy|np|pandas|pd|pyomo|pyo|highspy|click|rich|matplotlib|mpl|plt|shiny|htmltools|starlette"
    "|dask|distributed|av|simpy|scipy|playwright"
)
nitpick_ignore_regex = [(r"py:.*", rf"~?({_OUTSIDE})(\..+)?")]


def _modules() -> dict[str, list[str]]:
    """Every module of procure, each with its submodules (empty for a plain module)."""
    tree: dict[str, list[str]] = {"procure": []}
    for info in pkgutil.walk_packages(procure.__path__, "procure."):
        tree[info.name] = []
        tree[info.name.rpartition(".")[0]].append(info.name)
    return tree


def _summary(module: str) -> str:
    """The first paragraph of a module's docstring, on one line."""
    doc = inspect.getdoc(importlib.import_module(module)) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _page(module: str, submodules: list[str]) -> str:
    """The reST of a module's page: its docstring and members, then its submodules."""
    lines = [module, "=" * len(module), "", f".. automodule:: {module}", ""]
    if submodules:
        lines += [".. rubric:: Modules", "", ".. toctree::", "   :hidden:", ""]
        lines += [f"   {sub}" for sub in submodules] + [""]
        for sub in submodules:
            # Each summary is read in its own module, as on the module's page.
            lines += [f".. py:currentmodule:: {sub}", "", f"* :mod:`{sub}`: {_summary(sub)}", ""]
    return "\n".join(lines)


def _write_module_pages() -> None:
    """Write docs/_api/<module>.rst for every module of procure (only the pages that change, so
    that an incremental build rereads only those), and remove the pages of modules that are gone.

    Pages are written here rather than by ``sphinx.ext.autosummary``: a package may bind the name
    of one of its modules to a function (``procure.analyses.rank``, the module, and
    ``procure.analyses.rank``, the function it re-exports), and autosummary then documents the
    function in place of the module."""
    API_DIR.mkdir(exist_ok=True)
    pages = {f"{name}.rst": _page(name, subs) for name, subs in _modules().items()}
    for name, text in pages.items():
        path = API_DIR / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for path in API_DIR.glob("*.rst"):
        if path.name not in pages:
            path.unlink()


_write_module_pages()

#: What a name resolves to when it exists outside procure.
OUTSIDE = "<outside procure>"


@functools.cache
def _imports(module: str) -> dict[str, str]:
    """The names a module binds by import at its top level (``TYPE_CHECKING`` blocks included):
    name → the absolute dotted name it stands for."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return {}
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    bound: dict[str, str] = {}

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = top
            elif isinstance(stmt, ast.ImportFrom):
                base = stmt.module or ""
                if stmt.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - stmt.level + 1]
                    base = ".".join([*parts, stmt.module] if stmt.module else parts)
                for alias in stmt.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(stmt, ast.If):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                visit(stmt.body)
                for handler in stmt.handlers:
                    visit(handler.body)
                visit(stmt.orelse)

    visit(ast.parse(Path(spec.origin).read_text()).body)
    return bound


def _canonical(obj: object) -> str | None:
    """Where a class or function of procure is defined (module and qualified name), else None."""
    if inspect.ismodule(obj):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not (inspect.isclass(obj) or inspect.isroutine(obj)) or not isinstance(qualname, str):
        return None
    if isinstance(module, str) and (module == "procure" or module.startswith("procure.")):
        return f"{module}.{qualname}"
    return None


def _member(obj: object, name: str) -> object:
    """``getattr(obj, name)``, counting a dataclass field or an annotated class attribute that has
    no value on the class; AttributeError when there is no such member."""
    try:
        return getattr(obj, name)
    except AttributeError:
        if inspect.isclass(obj) and any(name in getattr(k, "__annotations__", {}) for k in obj.__mro__):
            return None
        raise


def _home(dotted: str, depth: int = 0) -> str | None:
    """Where the object a dotted name means is documented: the module that defines it and its
    qualified name there, following imports and re-exports; :data:`OUTSIDE` for an object outside
    procure; None when Python finds no such object."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        break
    else:
        return None
    modname, rest = module.__name__, parts[i:]
    if modname.split(".")[0] != "procure":
        obj: object = module
        try:
            for part in rest:
                obj = _member(obj, part)
        except AttributeError:
            return None
        return OUTSIDE
    if not rest:
        return modname
    imported = _imports(modname).get(rest[0])
    if imported is not None and depth < 20:
        return _home(".".join([imported, *rest[1:]]), depth + 1)
    obj = module
    try:
        for part in rest:
            obj = _member(obj, part)
    except AttributeError:
        return None
    if isinstance(obj, typing.TypeVar):
        return OUTSIDE
    canonical = _canonical(obj)
    if canonical is not None and canonical != dotted and depth < 20:
        return _home(canonical, depth + 1)
    return f"{modname}.{'.'.join(rest)}"


def _object(dotted: str) -> object:
    """The object at an absolute dotted name of procure, or None."""
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _resolve_procure_name(app, env, node, contnode):  # type: ignore[no-untyped-def]
    """Resolve a Python cross-reference the way Python resolves the name in the module of the
    docstring: a re-export (``procure.program.Plan``) or an imported name (``Plan`` in
    ``procure.program.numbers.problem``) links to the definition; a name outside procure is left as
    text. A name Python cannot find, or a procure object not documented under that role, stays
    unresolved: nitpicky mode makes it a warning."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".")
    module = node.get("py:module")
    cls = node.get("py:class")
    candidates = []
    if module:
        if cls:
            candidates.append(f"{module}.{cls}.{target}")
        candidates.append(f"{module}.{target}")
    candidates.append(target)
    for name in candidates:
        home = _home(name)
        if home is None:
            continue
        if home == OUTSIDE:
            return contnode
        new = node.deepcopy()
        new["py:module"] = None
        new["py:class"] = None
        new["reftarget"] = home
        domain = env.get_domain("py")
        found = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], home, new, contnode)
        owner = home.rpartition(".")[0]
        if found is None and node["reftype"] in {"attr", "obj"} and inspect.isclass(_object(owner)):
            # A field listed in its class's Attributes section: the link goes to the class.
            found = domain.resolve_xref(env, node["refdoc"], app.builder, "class", owner, new, contnode)
        return found
    if hasattr(builtins, target.split(".")[0]):
        return contnode
    return None


_VALIDATION_CHECKS: set[str] | None = None


def _validate_where_defined(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    """numpydoc checks a docstring where its object is defined, not again under each name that
    imports it (autodoc reads the docstrings of imported members before it leaves them out)."""
    global _VALIDATION_CHECKS
    if _VALIDATION_CHECKS is None:
        _VALIDATION_CHECKS = set(app.config.numpydoc_validation_checks)
    canonical = _canonical(obj)
    imported = canonical is not None and canonical != name
    app.config.numpydoc_validation_checks = set() if imported else _VALIDATION_CHECKS


def _signature_only_where_there_is_one(mangle):  # type: ignore[no-untyped-def]
    """numpydoc's signature hook, kept away from objects autodoc gives no signature (a type alias
    such as ``tuple[…]``): Sphinx 9 fails on a signature returned for those."""

    def hook(app, what, name, obj, options, sig, retann):  # type: ignore[no-untyped-def]
        return None if sig is None else mangle(app, what, name, obj, options, sig, retann)

    return hook


def setup(app):  # type: ignore[no-untyped-def]
    for listener in list(app.events.listeners["autodoc-process-signature"]):
        if listener.handler is numpydoc.numpydoc.mangle_signature:
            app.events.disconnect(listener.id)
            app.connect("autodoc-process-signature", _signature_only_where_there_is_one(listener.handler))
    # numpydoc also says "Unknown section" as a Python warning; its GL06 check says it as a
    # Sphinx warning, which -W makes an error.
    warnings.filterwarnings("ignore", message="Unknown section", category=UserWarning)
    app.connect("missing-reference", _resolve_procure_name)
    app.connect("autodoc-process-docstring", _validate_where_defined, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
