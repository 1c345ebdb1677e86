"""The package's layout: wings along the data flow, imports only downward, no cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "procure"

#: Order of the wings: a module may import from its own wing or a lower one, never a higher.
WINGS = {"base": 0, "pipeline": 1, "ledger": 2, "program": 3, "analyses": 4, "interfaces": 5, "facade": 6}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _wing(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"  # procure/__init__.py re-exports every wing
    return parts[1] if parts[1] in WINGS else "base"


def _imports(path: Path) -> set[str]:
    """Modules of ``procure`` that ``path`` imports, at any depth of the file."""
    tree = ast.parse(path.read_text())
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("procure")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("procure"):
                found.add(target)
                found |= {
                    f"{target}.{a.name}"
                    for a in node.names
                    if (PACKAGE.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                }
    return found


GRAPH = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_only_downward(module):
    mine = WINGS[_wing(module)]
    upward = sorted(t for t in GRAPH[module] if WINGS[_wing(t)] > mine)
    assert not upward, f"{module} ({_wing(module)}) imports a later wing: {upward}"


def test_the_pipeline_knows_no_ledger():
    for module, targets in GRAPH.items():
        if _wing(module) == "pipeline":
            assert not [t for t in targets if _wing(t) not in ("base", "pipeline")], module


def test_no_import_cycle_between_modules():
    """Depth-first search for a cycle among module-level imports of procure's modules."""
    modules = set(GRAPH)

    def resolve(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    edges = {m: {r for t in GRAPH[m] if (r := resolve(t)) and r != m} for m in modules}
    # A package's __init__ re-exporting its own modules is not a cycle of code.
    edges = {m: {t for t in ts if not m.startswith(t + ".") and not t.startswith(m + ".")} for m, ts in edges.items()}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for t in edges[m]:
            if state.get(t) == 1:
                raise AssertionError(" → ".join([*trail, m, t]))
            if t not in state:
                visit(t, [*trail, m])
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m, [])


def test_a_cycle_would_be_found():
    """The graph reader sees relative imports, two and three levels up: the plots import the
    program, the app's solving worker imports it, the plan imports output."""
    assert "procure.program" in GRAPH["procure.interfaces.plots"]
    assert "procure.program" in GRAPH["procure.interfaces.pages.work"]
    assert "procure.output" in GRAPH["procure.program.readout.plan"]
    assert WINGS[_wing("procure.interfaces.plots")] > WINGS[_wing("procure.program.readout.plan")]


def _loaded_after(code: str) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(run.stdout.split())


def test_import_procure_loads_no_solver_and_no_plotting():
    loaded = _loaded_after("import procure")
    assert "pyomo" not in loaded
    assert "matplotlib" not in loaded


def test_procure_bill_loads_no_solver_and_no_plotting():
    loaded = _loaded_after(
        "import contextlib, io\nfrom procure.interfaces.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['bill', '--json']) == 0"
    )
    assert "procure.pipeline.formulas" in loaded
    assert "pyomo" not in loaded
    assert "matplotlib" not in loaded


def test_help_and_version_load_no_numpy():
    for flag in ("--help", "--version"):
        loaded = _loaded_after(
            "import contextlib, io\nfrom procure.interfaces.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['{flag}']) == 0"
        )
        assert "numpy" not in loaded and "pandas" not in loaded and "pyomo" not in loaded, flag


def test_option_defaults_agree_with_the_modules_that_use_them():
    from procure.analyses.rank import RANK_BY
    from procure.analyses.sensitivity import PARAMETERS
    from procure.defaults import RANK_CHOICES, VARY_PARAMETERS

    assert tuple(PARAMETERS) == VARY_PARAMETERS
    assert tuple(RANK_BY) == RANK_CHOICES
