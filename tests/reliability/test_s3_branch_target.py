"""A branch target on S3 (moto's real HTTP server on 127.0.0.1), with real dbt processes: a table
and an incremental model built on main, then on the branch (Spark's writers put the files in the
branch's directory on S3), main unchanged, then promoted: main reads the branch's rows and no data
file was written or copied by the promotion. A table and a schema main does not have are built on
the branch only (main's catalog does not list them) and registered by the promotion."""

from __future__ import annotations

from pathlib import Path

import lance
import pytest
import yaml

from tests.reliability.helpers import check_namespace, make_project

pytestmark = pytest.mark.s3

A = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen"
INC = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select gen from {{ ref('a') }}
"""
FRESH = "{{ config(materialized='table') }} select gen * 3 as gen from {{ ref('a') }}"
ELSEWHERE = "{{ config(materialized='table', schema='extra') }} select 5 as gen"


def test_build_on_a_branch_and_promote_on_s3(s3_server, tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "proj",
        s3_server.uri("branch-target"),
        s3_server.storage_options,
        sample=False,
        threads=1,
        extra={"table_version_management": True},
    )
    project.write("models/a.sql", A)
    project.write("models/inc.sql", INC)
    profiles = yaml.safe_load((project.path / "profiles.yml").read_text())
    outputs = next(iter(profiles.values()))["outputs"]
    outputs["ci"] = {**outputs["t"], "branch": "ci_s3"}
    (project.path / "profiles.yml").write_text(yaml.safe_dump(profiles))
    storage = s3_server.storage_options

    def rows(location: str) -> list[int]:
        return sorted(lance.dataset(location, storage_options=storage).to_table()["gen"].to_pylist())

    assert project.run("run").returncode == 0
    ns = project.namespace()
    main = {name: ns.describe_table(["analytics", name]) for name in ("a", "inc")}

    project.write("models/fresh.sql", FRESH)  # new: built on the branch only
    project.write("models/elsewhere.sql", ELSEWHERE)  # in a schema main does not have
    built = project.run("build", "--target", "ci", "--vars", "{gen: 2}")
    assert built.returncode == 0, built.output[-3000:]
    assert not ns.table_exists(["analytics", "fresh"]) and not ns.namespace_exists(["analytics", "extra"])
    new = {
        name: ns.describe_table(table, branch="ci_s3").location
        for name, table in (
            ("fresh", ["analytics", "fresh"]),
            ("elsewhere", ["analytics", "extra", "elsewhere"]),
        )
    }
    assert rows(new["fresh"]) == [6] and rows(new["elsewhere"]) == [5]
    new_files = {
        name: set(ns.storage.files(location.rsplit("/tree/", 1)[0])) for name, location in new.items()
    }
    branch = {name: ns.describe_table(["analytics", name], branch="ci_s3") for name in ("a", "inc")}
    assert rows(branch["a"].location) == [2] and rows(branch["inc"].location) == [1, 2]
    assert {name: ns.describe_table(["analytics", name]).version for name in main} == {
        name: info.version for name, info in main.items()
    }
    files = {name: set(ns.storage.files(info.location)) for name, info in main.items()}

    promoted = project.run("run-operation", "lancens.promote_branch", "--args", "{branch: ci_s3}")
    assert promoted.returncode == 0, promoted.output[-3000:]
    fresh = project.namespace()
    check_namespace(fresh)
    assert rows(fresh.describe_table(["analytics", "a"]).location) == [2]
    assert rows(fresh.describe_table(["analytics", "inc"]).location) == [1, 2]
    for name, info in main.items():
        written = set(fresh.storage.files(info.location)) - files[name]
        assert not [path for path in written if path.endswith(".lance")], written  # no data file copied
    for name, table in (
        ("fresh", ["analytics", "fresh"]),
        ("elsewhere", ["analytics", "extra", "elsewhere"]),
    ):
        location = fresh.describe_table(table).location
        assert rows(location) == ([6] if name == "fresh" else [5]), name
        written = set(fresh.storage.files(location)) - new_files[name]
        assert not [path for path in written if path.endswith(".lance")], written
