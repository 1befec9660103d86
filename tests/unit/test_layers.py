"""The package's floors, read from its import statements (docs/architecture.md).

Every package is a floor (`FLOORS`, lowest first) and imports only its own floor and those below:
the engine (`namespace/`) knows neither dbt nor Spark; the data source (`spark/`) knows the engine
but not the adapter; and so on up to the dbt face (`adapter/`). No module imports itself back
through others (an import circle), counting imports inside functions too. `from pkg import
sibling` inside `pkg` depends on the sibling only, as Python runs it (the package's `__init__` is
already being imported).
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


# The package's floors, lowest first. A module may import its own floor and the floors below it,
# never one above: the engine knows nothing of Spark or dbt, the data source nothing of dbt, the
# shared definitions nothing of the runtime, and so on up to the dbt face.
FLOORS = (
    "text",  # yes/no values and back-quoted identifiers: plain Python
    "namespace",  # the engine: Lance Directory Namespace spec
    "spark",  # the `lance` PySpark data source
    "embeddings",  # vectors from text with LanceDB's registry, in Spark's Python workers: no dbt
    "definitions",  # names, relation, column, credentials, SQL text, config parsing
    "runtime",  # process state, Spark backends, JVM bridge, errors, staging and landing
    "commits",  # writes and table writes, atomic publish
    "metadata",  # schemas, relations, catalog, docs, history, tags, maintenance
    "materializations",  # incremental, merge, seeds, snapshots, indexes, clone
    "statements",  # DDL and DML the adapter carries out itself
    "adapter",  # the dbt face: impl, connections
)
# Outside dbt.adapters.lancens: what the lower floors must not import either.
_DBT_AND_SPARK = ("dbt_common", "dbt.adapters.contracts", "dbt.adapters.base", "pyspark")
OUTSIDE = {
    "text": (*_DBT_AND_SPARK, "pyarrow", "lance"),
    "namespace": _DBT_AND_SPARK,
    "spark": ("dbt_common", "dbt.adapters.contracts", "dbt.adapters.base"),
}


def floor_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[3] if len(parts) > 3 and parts[3] in FLOORS else None


def test_every_package_has_a_floor() -> None:
    packages = {path.parent.name for path in PACKAGE_DIR.glob("*/__init__.py")}
    assert packages - set(FLOORS) == set()


@pytest.mark.parametrize("layer", FLOORS)
def test_lower_layers_do_not_import_upper_ones(layer: str) -> None:
    above = FLOORS[FLOORS.index(layer) + 1 :]
    forbidden = tuple(f"{PACKAGE}.{floor}" for floor in above) + OUTSIDE.get(layer, ())
    prefix = f"{PACKAGE}.{layer}"
    offending = {
        module: sorted(
            name
            for name in imports(module)
            if name.startswith(forbidden) or name in {PACKAGE, f"{PACKAGE}.plugin"}
        )
        for module in MODULES
        if module == prefix or module.startswith(prefix + ".")
    }
    assert {module: names for module, names in offending.items() if names} == {}
