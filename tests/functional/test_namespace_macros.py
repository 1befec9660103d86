"""The `lancens.*` namespace macros through `dbt run-operation`, and time travel in a model.

Each class gets its own namespace root with table version management on (profile flag), so the
four-step commits are exercised and other suites' roots are left alone.
"""

from __future__ import annotations

import os

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

ORDERS = """
{{ config(materialized='table') }}
select id, {{ var('gen', 1) }} as gen from (select explode(sequence(1, {{ var('gen', 1) }} + 1)) as id)
"""

TRAVEL = """
{{ config(materialized='table') }}
select * from {{ at_version(ref('orders'), var('travel_to', 1)) }}
"""


def _rows(location: str, version: int | None = None) -> list[tuple[int, int]]:
    table = lance.dataset(location, version=version).to_table()
    return sorted(zip(table.column("id").to_pylist(), table.column("gen").to_pylist(), strict=True))


class TestNamespaceMacros:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("macros_root"))
        return {
            "type": "lancens",
            "root": root,
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"orders.sql": ORDERS, "travel.sql": TRAVEL}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": "id,name\n1,ada\n2,grace\n"}

    def test_history_restore_time_travel(self, project, dbt_profile_target, capsys) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        orders = [*project.test_schema.split("."), "orders"]
        relation = f"{project.test_schema}.orders"

        run_dbt(["seed"])
        run_dbt(["run", "--select", "orders", "--vars", "{gen: 1}"])
        run_dbt(["run", "--select", "orders", "--vars", "{gen: 2}"])
        assert ns.describe_namespace([]).properties["table_version_management"] == "true"
        versions = ns.list_table_versions(orders).items
        assert [v.version for v in versions] == [1, 2]
        for version in versions:  # who made it, recorded with every version
            assert version.metadata["dbt_model"] == "model.test.orders"
            assert version.metadata["dbt_invocation_id"]
            assert version.metadata["dbt_lancens_version"]
        assert versions[0].metadata["dbt_invocation_id"] != versions[1].metadata["dbt_invocation_id"]
        seed_versions = ns.list_table_versions([*orders[:-1], "people"]).items
        assert seed_versions[-1].metadata["dbt_model"] == "seed.test.people"

        capsys.readouterr()
        run_dbt(["run-operation", "lancens.list_table_versions", "--args", f"{{relation: '{relation}'}}"])
        printed = capsys.readouterr().out
        assert "model.test.orders" in printed
        assert versions[1].metadata["dbt_invocation_id"] in printed

        # time travel in a model compiled and run by dbt
        run_dbt(["run", "--select", "travel", "--vars", "{travel_to: 1}"])
        travel = ns.describe_table([*orders[:-1], "travel"]).location
        assert _rows(travel) == [(1, 1), (2, 1)]

        # restore: a new version equal to version 1, recorded as made by the operation
        location = ns.describe_table(orders).location
        restore = f"{{relation: '{relation}', version: 1}}"
        run_dbt(["run-operation", "lancens.restore_table", "--args", restore])
        latest = ns.describe_table_version(orders)
        assert latest.version == 3
        assert latest.metadata["dbt_lancens_restored_from"] == "1"
        assert latest.metadata["dbt_model"] == "macro.lancens.restore_table"  # run-operation: the macro
        assert _rows(location) == _rows(location, 1) == [(1, 1), (2, 1)]
        assert _rows(location, 2) == [(1, 2), (2, 2), (3, 2)]

    def test_register_deregister_declare_drop(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        orders = [*schema.split("."), "orders"]
        run_dbt(["run", "--select", "orders", "--vars", "{gen: 1}"])
        location = ns.describe_table(orders).location

        run_dbt(["run-operation", "lancens.deregister_table", "--args", f"{{relation: '{schema}.orders'}}"])
        assert not ns.table_exists(orders)
        assert _rows(location) == [(1, 1), (2, 1)]  # files kept

        relative = os.path.relpath(location, dbt_profile_target["root"])
        args = f"{{relation: '{schema}.orders_again', location: '{relative}'}}"
        run_dbt(["run-operation", "lancens.register_table", "--args", args])
        again = [*schema.split("."), "orders_again"]
        assert ns.describe_table(again).location == location
        assert ns.describe_table(again).version is not None

        run_dbt(["run-operation", "lancens.declare_table", "--args", f"{{relation: '{schema}.later'}}"])
        assert ns.describe_table([*schema.split("."), "later"]).declared_only

        # `purge` as a string, as `--args` may spell it: "false" keeps the files, a value that means
        # neither fails naming it and drops nothing
        keep = f"{{relation: '{schema}.orders_again', purge: 'false'}}"
        _, output = run_dbt_and_capture(["run-operation", "lancens.drop_table", "--args", keep])
        assert "files kept at" in output
        assert not ns.table_exists(again)
        assert _rows(location) == [(1, 1), (2, 1)]

        run_dbt(["run-operation", "lancens.register_table", "--args", args])
        unclear = f"{{relation: '{schema}.orders_again', purge: 'maybe'}}"
        _, output = run_dbt_and_capture(
            ["run-operation", "lancens.drop_table", "--args", unclear], expect_pass=False
        )
        assert "purge must be true or false, got 'maybe'" in output
        assert ns.table_exists(again) and _rows(location) == [(1, 1), (2, 1)]
        purge = f"{{relation: '{schema}.orders_again', purge: true}}"
        run_dbt(["run-operation", "lancens.drop_table", "--args", purge])
        assert not ns.table_exists(again)
        assert not os.path.exists(location)
