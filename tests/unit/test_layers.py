"""The package's layers, read from its import statements (docs/architecture.md).

The engine (`namespace/`) knows neither dbt nor Spark; the data source (`spark/`) knows the engine
but not the adapter; and no module imports itself back through others (an import circle), counting
imports inside functions too. `from pkg import sibling` inside `pkg` depends on the sibling only,
as Python runs it (the package's `__init__` is already being imported).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "lancens"
PACKAGE = "dbt.adapters.lancens"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parents[2]).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE_DIR.rglob("*.py")}


def imports(module: str) -> set[str]:
    """Every module `module` imports at run time (anywhere in it, TYPE_CHECKING blocks excluded)."""
    found: set[str] = set()
    tree = ast.parse(MODULES[module].read_text())
    type_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & MODULES.keys()
            if len(submodules) == len(node.names) and module.startswith(node.module + "."):
                found.update(submodules)
            else:
                found.add(node.module)
                found.update(submodules)
    return found


def internal_graph() -> dict[str, set[str]]:
    return {module: (imports(module) & MODULES.keys()) - {module} for module in MODULES}


def test_no_module_imports_itself_back() -> None:
    graph = internal_graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == []


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("namespace", ("dbt.adapters.lancens.", "dbt_common", "dbt.adapters.contracts", "pyspark")),
        ("spark", ("dbt.adapters.lancens.core", "dbt.adapters.lancens.commits",
                   "dbt.adapters.lancens.materializations", "dbt.adapters.lancens.metadata",
                   "dbt.adapters.lancens.statements", "dbt_common", "dbt.adapters.contracts")),
    ],
)  # fmt: skip
def test_lower_layers_do_not_import_upper_ones(layer: str, forbidden: tuple[str, ...]) -> None:
    prefix = f"{PACKAGE}.{layer}"
    offending = {
        module: sorted(
            name
            for name in imports(module)
            if name.startswith(forbidden) and not name.startswith(f"{PACKAGE}.namespace")
        )
        for module in MODULES
        if module == prefix or module.startswith(prefix + ".")
    }
    assert {module: names for module, names in offending.items() if names} == {}
