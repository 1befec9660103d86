"""A branch target (profile key `branch:`): every write of the run lands on that Lance branch of its
table, main never changes, models built on the branch read the branch and the others read main.

Real dbt runs in process on a root with table version management; the tables are read back with
the engine and with pylance (by the branch's location, and by name through Lance's checkout).
"""

from __future__ import annotations

import json
import os
from copy import deepcopy
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

A = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen"
B = "{{ config(materialized='table') }} select gen, gen * 10 as tens from {{ ref('a') }}"
OTHER = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as other"
# Built on the branch, reading `other`, which the branch run does not build: main's rows.
C = """{{ config(materialized='table') }}
select b.gen, o.other from {{ ref('b') }} b cross join {{ ref('other') }} o"""
INC = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select {{ var('gen', 1) }} as gen
"""
NEW = "{{ config(materialized='table', enabled=var('new', false)) }} select 1 as id"
# Described (persist_docs) and indexed: both land on the branch with the rows.
DOCUMENTED = """
{{ config(materialized='table', persist_docs={'relation': true, 'columns': true},
          indexes=[{'columns': ['id'], 'type': 'btree'}]) }}
select id from range({{ var('gen', 1) }} * 10)
"""
PROPERTIES = """
version: 2
models:
  - name: documented
    description: "{{ var('about', 'on main') }}"
    columns:
      - name: id
        description: "the id"
"""
MERGED = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, {{ var('gen', 1) }} as gen from (select explode(array(1, {{ var('gen', 1) }} + 1)) as id)
"""
SWITCH = "{{ config(materialized=var('kind', 'view')) }} select 1 as id"


def rows(location: str, column: str = "gen") -> list[int]:
    return sorted(lance.dataset(location).to_table().column(column).to_pylist())


def data_files(location: str) -> set[str]:
    """Every file under the table's own `data/` (main's data files)."""
    found: set[str] = set()
    for folder, _, names in os.walk(os.path.join(location, "data")):
        found.update(os.path.join(folder, name) for name in names)
    return found


class TestBranchTarget:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("branch_root"))
        return {
            "type": "lancens",
            "root": root,
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        outputs = {"default": dbt_profile_target, "ci": deepcopy(dbt_profile_target)}
        outputs["default"]["schema"] = unique_schema
        outputs["ci"]["schema"] = unique_schema
        outputs["ci"]["branch"] = "ci_1234"
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"drop_it.sql": "{% macro drop_it(t) %}{% do run_query('drop table ' ~ t) %}{% endmacro %}"}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": "id,name\n1,ann\n"}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "a.sql": A,
            "b.sql": B,
            "merged.sql": MERGED,
            "documented.sql": DOCUMENTED,
            "properties.yml": PROPERTIES,
            "other.sql": OTHER,
            "c.sql": C,
            "inc.sql": INC,
            "new_one.sql": NEW,
            "switch.sql": SWITCH,
        }

    def test_writes_land_on_the_branch_and_main_stays(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        run_dbt(["run"])
        main_before = {name: ns.describe_table([schema, name]) for name in ("a", "b", "other", "c", "inc")}
        files_before = {name: data_files(info.location) for name, info in main_before.items()}

        run_dbt(["run", "--target", "ci", "--select", "a", "b", "c", "inc", "--vars", "{gen: 2}"])

        for name, info in main_before.items():  # main: the same version, rows and data files
            now = ns.describe_table([schema, name])
            assert now.version == info.version, name
            assert data_files(now.location) == files_before[name], name
        assert rows(main_before["a"].location) == [1]
        assert rows(main_before["inc"].location) == [1]

        def on_branch(name: str) -> str:
            info = ns.describe_table([schema, name], branch="ci_1234")
            assert info.location.endswith("/tree/ci_1234"), info.location
            return info.location

        assert rows(on_branch("a")) == [2]
        assert rows(on_branch("b"), "tens") == [20]  # b read a on the branch
        assert rows(on_branch("inc")) == [1, 2]  # appended to main's rows, on the branch
        assert rows(on_branch("c")) == [2] and rows(on_branch("c"), "other") == [1]  # other: main's
        assert [b.name for b in ns.list_table_branches([schema, "other"]).items] == []
        # the same branch by name, as any Lance reader opens it
        by_name = lance.dataset(main_before["a"].location).checkout_version(("ci_1234", None))
        assert by_name.to_table().column("gen").to_pylist() == [2]

        # A second run on the branch builds on the branch's versions (not main's again).
        run_dbt(["run", "--target", "ci", "--select", "inc", "--vars", "{gen: 3}"])
        assert rows(on_branch("inc")) == [1, 2, 3]
        assert rows(main_before["inc"].location) == [1]

        # `dbt docs generate` on the branch target shows the branch's tables, on main main's.
        def catalog_stats(target: str, name: str) -> dict:
            run_dbt(["docs", "generate", "--target", target])
            catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
            node = catalog["nodes"][f"model.test.{name}"]
            return {key: stat["value"] for key, stat in node["stats"].items()}

        assert catalog_stats("ci", "inc")["location"] == on_branch("inc")
        assert catalog_stats("ci", "inc")["row_count"] == 3
        assert catalog_stats("default", "inc")["row_count"] == 1

        # An incremental merge and a seed on the branch: main keeps its rows.
        run_dbt(["seed"])
        run_dbt(["run", "--select", "merged"])
        merged = ns.describe_table([schema, "merged"])
        run_dbt(["run", "--target", "ci", "--select", "merged", "--vars", "{gen: 4}"])
        table = lance.dataset(on_branch("merged")).to_table().sort_by("id")
        assert table.to_pydict() == {"id": [1, 2, 5], "gen": [4, 1, 4]}
        assert ns.describe_table([schema, "merged"]).version == merged.version
        assert rows(merged.location) == [1, 1]
        people = ns.describe_table([schema, "people"])
        (Path(project.project_root) / "seeds" / "people.csv").write_text("id,name\n1,ann\n2,bo\n")
        run_dbt(["seed", "--target", "ci"])
        assert sorted(lance.dataset(on_branch("people")).to_table()["id"].to_pylist()) == [1, 2]
        assert ns.describe_table([schema, "people"]).version == people.version

        # The same process back on main: Spark's entries read main again.
        run_dbt(["run", "--select", "b", "c"])
        assert rows(ns.describe_table([schema, "b"]).location, "tens") == [10]

    def test_a_new_table_is_built_on_the_branch_only(self, project, dbt_profile_target) -> None:
        """Main does not list it (more in test_branch_new_objects.py); the branch reads its rows."""
        ns = DirectoryNamespace(dbt_profile_target["root"])
        run_dbt(["run", "--target", "ci", "--select", "new_one", "--vars", "{new: true}"])
        assert not ns.table_exists([project.test_schema, "new_one"])
        location = ns.describe_table([project.test_schema, "new_one"], branch="ci_1234").location
        assert rows(location, "id") == [1]

    def test_a_drop_of_mains_object_is_refused(self, project, dbt_profile_target) -> None:
        """A view on main turned into a table on the branch would drop main's view: refused."""
        ns = DirectoryNamespace(dbt_profile_target["root"])
        run_dbt(["run", "--select", "switch", "other"])
        view = ns.describe_view([project.test_schema, "switch"])
        _, log = run_dbt_and_capture(
            ["run", "--target", "ci", "--select", "switch", "--vars", "{kind: table}"], expect_pass=False
        )
        assert "drop_relation" in log and "would change main" in log and "ci_1234" in log
        assert ns.describe_view([project.test_schema, "switch"]) == view

        # The same through SQL a hook or an operation runs: DROP TABLE is refused, the table stays.
        table = f"{project.test_schema}.other"
        _, log = run_dbt_and_capture(
            ["run-operation", "drop_it", "--target", "ci", "--args", f"{{t: {table}}}"], expect_pass=False
        )
        assert "DropRelation is refused" in log and "ci_1234" in log
        assert ns.table_exists([project.test_schema, "other"])

    def test_docs_and_indexes_land_on_the_branch(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [project.test_schema, "documented"]
        run_dbt(["run", "--select", "documented"])
        main = ns.describe_table(table)
        run_dbt(
            ["run", "--target", "ci", "--select", "documented", "--vars", "{gen: 2, about: on the branch}"]
        )
        branch = lance.dataset(ns.describe_table(table, branch="ci_1234").location)
        assert branch.count_rows() == 20
        assert branch.metadata.get("comment") == "on the branch"
        assert [index.name for index in branch.describe_indices()] == ["id_btree"]
        assert branch.describe_indices()[0].num_rows_indexed == 20
        after = ns.describe_table(table)
        assert after.version == main.version  # main: its version, description and index as they were
        plain = lance.dataset(after.location)
        assert plain.metadata.get("comment") == "on main" and plain.count_rows() == 10

    def test_debug_names_the_branch(self, project) -> None:
        _, log = run_dbt_and_capture(["debug", "--target", "ci"])
        assert "lancens branch: ci_1234" in log
