"""The layout of ``procure/program``: the model builder and the dual apart, at most 10 floors of
running imports, and the mix bound's coefficient written in one place.

Read from the source files with ``ast``, apart from the code: an import inside ``if
TYPE_CHECKING:`` names a type and does not run, so it is not counted.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import procure.program

PACKAGE = Path(procure.program.__file__).parent
ROOT = "procure.program"
MOST_FLOORS = 10


def _name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for sub in ast.walk(node))
    return skip


@cache
def imports(name: str) -> frozenset[str]:
    """The modules of the package that ``name`` imports when it runs (its package's own
    ``__init__`` aside)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_only(tree)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else (node.module or "")
            found.update(c for c in [target, *(f"{target}.{a.name}" for a in node.names)] if c in MODULES)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
    return frozenset(d for d in found if d != name and not name.startswith(d + ".") and d != ROOT)


def reach(name: str) -> set[str]:
    """Every module of the package that importing ``name`` runs."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        for d in imports(todo.pop()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


@cache
def floors(name: str) -> int:
    """1 + the most floors of the modules ``name`` imports."""
    return 1 + max((floors(d) for d in imports(name)), default=0)


def test_the_model_builder_runs_nothing_of_the_dual():
    for name in MODULES:
        if name.startswith(f"{ROOT}.model"):
            assert not {d for d in reach(name) if d.startswith(f"{ROOT}.dual")}, name


def test_the_dual_runs_nothing_of_the_model_or_the_solve():
    for name in MODULES:
        if name.startswith(f"{ROOT}.dual"):
            assert not {d for d in reach(name) if d.startswith((f"{ROOT}.model", f"{ROOT}.solve"))}, name


def test_at_most_ten_floors_of_imports():
    deepest = max(MODULES, key=floors)
    assert floors(deepest) <= MOST_FLOORS, (deepest, floors(deepest))


def test_the_imports_read_here_are_the_ones_that_run():
    # the reader above is no oracle if it misses imports: the solve's module reaches the model,
    # the dual and the readout, as it must to solve
    reached = reach(f"{ROOT}.solve.program")
    assert {f"{ROOT}.model.build", f"{ROOT}.dual", f"{ROOT}.readout.plan", f"{ROOT}.rows"} <= reached


def test_the_mix_coefficient_is_written_once():
    # rate · (member − share): a subtraction of a share from members, in rows.py only
    places = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                left, right = ast.unparse(node.left), ast.unparse(node.right)
                if "member" in left and "share" in right:
                    places.append(name)
    assert places == [f"{ROOT}.rows"]


def _held_use(node: ast.AST) -> bool:
    """``… @ held`` (what the hours held use of a row), anywhere in ``node``."""
    return any(
        isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult) and "held" in ast.unparse(sub.right)
        for sub in ast.walk(node)
    )


def test_the_rows_right_hand_sides_are_written_once():
    # a right-hand side that takes off what the hours held use (a capacity's room ``C − u·h0``,
    # a mix bound's ``−coef·h0``) is written in rows.py only, outside the numbers' own checks
    # of a ledger; a readout of what a row uses (``u·(h0 + x)``) is no right-hand side
    places = []
    for name, path in MODULES.items():
        if name.startswith(f"{ROOT}.numbers"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            taken_off = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _held_use(node.right)
            negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _held_use(node.operand)
            if taken_off or negated:
                places.append(name)
    assert set(places) == {f"{ROOT}.rows"}, places


def test_every_row_mutation_of_the_benchmark_names_text_that_is_there_once():
    """``benchmarks/row_mutations.py`` perturbs a row by replacing its text: text that moved to
    another module would leave that row unperturbed and the table silently short."""
    top = Path(__file__).resolve().parents[2]  # the checkout the benchmark copies
    source = (top / "benchmarks" / "row_mutations.py").read_text()
    table = next(
        node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "MUTATIONS" for t in node.targets)
    )
    mutations = ast.literal_eval(table)
    assert len(mutations) >= 10
    for name, file, old, new in mutations:
        assert old != new, name
        assert (top / file).read_text().count(old) == 1, f"{name}: {old!r} is not once in {file}"
