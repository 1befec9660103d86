"""Bad input gets a clear error and changes nothing.

Every root is prepared with the engine (no Spark), then ONE child process runs one real dbt
invocation per case (`dbt_many.py`), so the cases share a JVM. Each test checks the error text a
user sees and that every byte under the root is as it was before.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import Project, check_namespace, make_project, run_many, tree

GOOD_SQL = "{{ config(materialized='table') }}\nselect 1 as id union all select 2 as id\n"
# An incremental model whose SQL no longer matches its table: the table has (id, old_col), the
# model selects (id, new_col).
DRIFTED_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id', "
    "on_schema_change='fail') }}\nselect cast(3 as bigint) as id, 'c' as new_col\n"
)
ROWS = pa.table({"id": pa.array([1, 2], pa.int32())})


def _project(base: Path, name: str, root: str) -> Project:
    project = make_project(base / name, root, sample=False)
    project.write("models/good.sql", GOOD_SQL)
    return project


def _seeded_root(path: Path) -> DirectoryNamespace:
    """A root holding analytics.good and analytics.ok (as a previous successful run would)."""
    ns = DirectoryNamespace(str(path))
    ns.create_namespace(["analytics"])
    ns.create_table(["analytics", "good"], ROWS)
    ns.create_table(["analytics", "ok"], pa.table({"a": [1, 3], "b": [2, 4]}))
    return ns


def _latest_manifest(root: Path) -> Path:
    """The newest `__manifest` version file (V2 names count down, so the smallest name)."""
    return Path(sorted(glob.glob(str(root / "__manifest" / "_versions" / "*.manifest")))[0])


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("bad_input")

    inputs_root = base / "inputs_root"
    _seeded_root(inputs_root)
    inputs = _project(base, "inputs", str(inputs_root))
    inputs.write("models/good.sql", "{{ config(materialized='table') }}\nselect no_such_column from range(3)")
    inputs.write("seeds/ok.csv", "a,b\n1,2\n3,4,5\n")
    # A name no namespace table or level can have fails the whole invocation when dbt parses it.
    names = make_project(base / "names", str(inputs_root), sample=False)
    names.write("models/bad-name.sql", GOOD_SQL)
    schema = make_project(base / "schema", str(inputs_root), sample=False)
    schema.write("models/odd_schema.sql", "{{ config(schema='bad_level_') }}\nselect 1 as id")

    file_root = base / "a_file"
    file_root.write_text("not a directory\n")
    file_project = _project(base, "file_root", str(file_root))

    corrupt_root = base / "corrupt_root"
    _seeded_root(corrupt_root)
    _latest_manifest(corrupt_root).write_bytes(b"not a lance manifest" * 4)
    corrupt = _project(base, "corrupt", str(corrupt_root))

    missing_root = base / "missing_root"
    _seeded_root(missing_root)
    _latest_manifest(missing_root).unlink()
    missing = _project(base, "missing", str(missing_root))

    drift_root = base / "drift_root"
    drift_ns = _seeded_root(drift_root)
    drift_ns.create_table(["analytics", "drifted"], pa.table({"id": [1, 2], "old_col": ["a", "b"]}))
    drift = _project(base, "drift", str(drift_root))
    drift.write("models/drifted.sql", DRIFTED_SQL)

    roots = {
        "inputs": str(inputs_root),
        "file": str(file_root),
        "corrupt": str(corrupt_root),
        "missing": str(missing_root),
        "drift": str(drift_root),
    }
    before = {name: tree(root) for name, root in roots.items()}
    plan = [
        [str(inputs.path), "build"],
        [str(names.path), "run"],
        [str(schema.path), "run"],
        [str(file_project.path), "run"],
        [str(corrupt.path), "run"],
        [str(missing.path), "run"],
        [str(drift.path), "run", "--select", "drifted"],
    ]
    outcomes = run_many(plan, base, timeout=600)
    return {
        "outcomes": dict(
            zip(["inputs", "names", "schema", "file", "corrupt", "missing", "drift"], outcomes, strict=True)
        ),
        "before": before,
        "roots": roots,
    }


def _unchanged(cases: dict[str, Any], name: str) -> None:
    assert tree(cases["roots"][name]) == cases["before"][name]


def test_bad_inputs_fail_clearly_and_change_nothing(cases: dict[str, Any]) -> None:
    outcome = cases["outcomes"]["inputs"]
    nodes = outcome["nodes"]
    assert not outcome["success"]
    assert nodes["good"]["status"] == "error" and "no_such_column" in nodes["good"]["message"]
    assert nodes["ok"]["status"] == "error"
    assert "Expected 2 columns" in nodes["ok"]["message"] and "ok.csv" in nodes["ok"]["message"]
    names = cases["outcomes"]["names"]
    assert not names["success"]
    assert "Invalid table name 'bad-name'" in names["exception"], names
    schema = cases["outcomes"]["schema"]
    assert not schema["success"]
    assert "Invalid schema level 'bad_level_'" in schema["exception"], schema
    _unchanged(cases, "inputs")
    ns = DirectoryNamespace(cases["roots"]["inputs"])
    assert check_namespace(ns) == {("analytics", "good"): 2, ("analytics", "ok"): 2}


def test_root_that_is_a_file(cases: dict[str, Any]) -> None:
    outcome = cases["outcomes"]["file"]
    text = outcome["exception"] + json.dumps(outcome["nodes"])
    assert not outcome["success"]
    assert cases["roots"]["file"] in text and "not a directory" in text.lower(), text
    _unchanged(cases, "file")


def test_corrupt_manifest_version(cases: dict[str, Any]) -> None:
    outcome = cases["outcomes"]["corrupt"]
    assert not outcome["success"]
    assert "__manifest" in outcome["exception"] + json.dumps(outcome["nodes"]), outcome
    _unchanged(cases, "corrupt")


def test_missing_manifest_version(cases: dict[str, Any]) -> None:
    assert not cases["outcomes"]["missing"]["success"]
    _unchanged(cases, "missing")


def test_schema_change_under_on_schema_change_fail(cases: dict[str, Any]) -> None:
    outcome = cases["outcomes"]["drift"]
    assert not outcome["success"]
    node = outcome["nodes"]["drifted"]
    assert node["status"] == "error"
    message = node["message"]
    assert "out of sync" in message, message
    assert "New columns in the model: ['new_col']" in message, message
    assert "columns the model no longer has: ['old_col']" in message, message
    _unchanged(cases, "drift")
    counts = check_namespace(DirectoryNamespace(cases["roots"]["drift"]))
    assert counts[("analytics", "drifted")] == 2
