"""New tables and schemas on a branch target: a model whose table main does not have, and a model in
a schema main does not have, are built on the branch only. Main's catalog (the engine's, and a
fresh native namespace's) does not list them until `lancens.promote_branch`, which registers them
in the same `__manifest` commit as the other promoted tables, copying no data file. Reads within
the branch target see them (a model reading one, an incremental model's second run, `dbt docs
generate`); `lancens.delete_branch` of a branch never promoted removes them.

Real dbt runs in process on a root with table version management; read back with the engine,
pylance and native pylance's `DirectoryNamespace`.
"""

from __future__ import annotations

import json
import os
from copy import deepcopy
from pathlib import Path

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.metadata.schemas import list_schemas
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.branch_landing import BranchLanding

ON = "{{ config(enabled=var('new', false)) }}"
A = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen"
FRESH = ON + "{{ config(materialized='table') }} select id from range({{ var('gen', 1) }} * 3)"
# reads the new table within the branch target
READER = ON + "{{ config(materialized='table') }} select count(*) as n from {{ ref('fresh') }}"
GROWING = (
    ON
    + """
{{ config(materialized='incremental', incremental_strategy='append') }}
select {{ var('gen', 1) }} as gen
"""
)
ELSEWHERE = ON + "{{ config(materialized='table', schema='extra') }} select 5 as five"


def data_files(location: str) -> set[str]:
    found: set[str] = set()
    for folder, _, names in os.walk(location):
        found.update(os.path.join(folder, n) for n in names if n.endswith(".lance"))
    return {f for f in found if "/_versions/" not in f}


def column(location: str, name: str) -> list[int]:
    return sorted(lance.dataset(location).to_table().column(name).to_pylist())


class TestBranchNewObjects:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("branch_new_root"))
        return {
            "type": "lancens",
            "root": root,
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        outputs = {"default": dbt_profile_target}
        outputs["default"]["schema"] = unique_schema
        for target, branch in (("ci", "ci_new"), ("ci2", "ci_dropped")):
            outputs[target] = {**deepcopy(dbt_profile_target), "branch": branch}
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {
            "schema_there.sql": "{% macro schema_there(schema) %}{% do print('schema there: ' ~ "
            "adapter.check_schema_exists(target.database, schema)) %}{% endmacro %}"
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "a.sql": A,
            "fresh.sql": FRESH,
            "reader.sql": READER,
            "growing.sql": GROWING,
            "elsewhere.sql": ELSEWHERE,
        }

    def test_new_tables_and_schemas_live_on_the_branch_until_promoted(
        self, project, dbt_profile_target
    ) -> None:
        root = dbt_profile_target["root"]
        ns = DirectoryNamespace(root)
        schema = project.test_schema
        extra = [schema, "extra"]  # a custom schema nests under the target's
        run_dbt(["run"])  # main: `a` only
        a_main = ns.describe_table([schema, "a"]).version

        run_dbt(["run", "--target", "ci", "--vars", "{new: true, gen: 2}"])
        run_dbt(["run", "--target", "ci", "--select", "growing", "--vars", "{new: true, gen: 3}"])

        native = native_ns.DirectoryNamespace(root=root)
        for name in ("fresh", "reader", "growing"):
            assert not ns.table_exists([schema, name]), name
            tables = native.list_tables(lns.ListTablesRequest(id=[schema])).tables
            assert name not in tables, name
        assert not ns.namespace_exists(extra)
        assert native.list_namespaces(lns.ListNamespacesRequest(id=[schema])).namespaces == []
        # dbt's schema listing on the branch target has the branch's schema (so a run does not create
        # it again), main's does not
        dotted = f"{schema}.extra"
        assert dotted in list_schemas(ns, BranchLanding(ns, "ci_new"))
        assert dotted not in list_schemas(ns)
        for target, there in (("ci", True), ("default", False)):
            _, log = run_dbt_and_capture(
                ["run-operation", "schema_there", "--target", target, "--args", f"{{schema: {dotted}}}"]
            )
            assert f"schema there: {there}" in log, target
        assert ns.describe_table([schema, "a"]).version == a_main

        def on_branch(table: list[str]) -> str:
            return ns.describe_table(table, branch="ci_new").location

        fresh = on_branch([schema, "fresh"])
        assert column(fresh, "id") == [0, 1, 2, 3, 4, 5]
        assert column(fresh.rsplit("/tree/", 1)[0], "id") == []  # a plain reader of its directory
        assert column(on_branch([schema, "reader"]), "n") == [6]  # read the new table on the branch
        assert column(on_branch([schema, "growing"]), "gen") == [2, 3]  # second run appended
        assert column(on_branch([*extra, "elsewhere"]), "five") == [5]

        run_dbt(["docs", "generate", "--target", "ci", "--vars", "{new: true}"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        stats = catalog["nodes"]["model.test.fresh"]["stats"]
        assert stats["row_count"]["value"] == 6 and stats["location"]["value"] == fresh

        directories = {
            name: on_branch(table).rsplit("/tree/", 1)[0]
            for name, table in {
                "fresh": [schema, "fresh"],
                "growing": [schema, "growing"],
                "elsewhere": [*extra, "elsewhere"],
                "a": [schema, "a"],
            }.items()
        }
        files = {name: data_files(directory) for name, directory in directories.items()}
        before = lance.dataset(os.path.join(root, "__manifest")).version

        run_dbt(["run-operation", "lancens.promote_branch", "--args", "{branch: ci_new}"])

        assert column(ns.describe_table([schema, "fresh"]).location, "id") == [0, 1, 2, 3, 4, 5]
        assert column(ns.describe_table([schema, "growing"]).location, "gen") == [2, 3]
        assert column(ns.describe_table([schema, "a"]).location, "gen") == [2]
        described = native.describe_table(lns.DescribeTableRequest(id=[*extra, "elsewhere"]))
        assert described.location is not None and column(described.location, "five") == [5]
        for name, directory in directories.items():  # no data file written or copied
            assert data_files(directory) == files[name], name
        a_version = ns.describe_table([schema, "a"]).version
        wanted = [
            f"{schema}$extra",
            f"{schema}$fresh",
            f"{schema}$growing",
            f"{schema}$extra$elsewhere",
            f"{schema}$a${a_version}",
        ]
        manifest = lance.dataset(os.path.join(root, "__manifest"))
        first_seen = {}
        for version in range(before + 1, manifest.version + 1):
            held = manifest.checkout_version(version).to_table(columns=["object_id"]).column(0).to_pylist()
            first_seen.update({oid: version for oid in wanted if oid in held and oid not in first_seen})
        assert len(first_seen) == 5 and len(set(first_seen.values())) == 1, first_seen  # ONE commit

        # main's later runs build on the promoted tables
        run_dbt(["run", "--select", "growing", "--vars", "{new: true, gen: 4}"])
        assert column(ns.describe_table([schema, "growing"]).location, "gen") == [2, 3, 4]

    def test_deleting_an_unpromoted_branch_removes_its_new_tables(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        table = [schema, "only_here"]
        path = Path(project.project_root) / "models" / "only_here.sql"
        path.write_text("{{ config(materialized='table') }} select 1 as one")
        run_dbt(["run", "--target", "ci2", "--select", "only_here"])
        directory = ns.describe_table(table, branch="ci_dropped").location.rsplit("/tree/", 1)[0]
        assert os.path.isdir(directory)

        run_dbt(["run-operation", "lancens.delete_branch", "--args", "{branch: ci_dropped}"])

        assert not os.path.exists(directory)
        assert not ns.table_exists(table) and ns.objects_on_branch("ci_dropped") == []
        path.unlink()
