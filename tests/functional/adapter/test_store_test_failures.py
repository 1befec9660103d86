"""dbt-tests-adapter's store-test-failures suite, and where the stored failures land in Lance.

Stored failures go to dbt's default audit schema, `<target schema>_dbt_test__audit`: one
namespace beside the target's (dbt's naming, not dbt-lancens' nesting of custom schemas), whose
name keeps its double underscore. `store_failures_as: table` is a Lance table there and `view` a
namespace view; a test whose name has upper-case letters is stored under its lower-cased name.
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.adapter.store_test_failures_tests.basic import (
    StoreTestFailuresAsExceptions,
    StoreTestFailuresAsGeneric,
    StoreTestFailuresAsInteractions,
    StoreTestFailuresAsProjectLevelEphemeral,
    StoreTestFailuresAsProjectLevelOff,
    StoreTestFailuresAsProjectLevelView,
)
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    BaseStoreTestFailures,
    BaseStoreTestFailuresLimit,
)
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace


class TestStoreTestFailuresAsInteractions(StoreTestFailuresAsInteractions):
    def test_failures_are_lance_objects(self, project, lancens_root: str) -> None:
        run_dbt(["test"], expect_pass=False)
        namespace = DirectoryNamespace(lancens_root)
        audit = [f"{project.test_schema}_dbt_test__audit"]
        assert sorted(namespace.list_tables(audit).items) == [
            "table_false",
            "table_true",
            "table_unset",
            "unset_true",
        ]
        assert sorted(namespace.list_views(audit).items) == [
            "view_false",
            "view_true",
            "view_unset",
            "view_unset_pass",
        ]
        stored = lance.dataset(namespace.describe_table([*audit, "table_true"]).location).to_table()
        assert stored.to_pylist() == [{"name": "theodore", "shirt": "green"}]


class TestStoreTestFailuresAsProjectLevelOff(StoreTestFailuresAsProjectLevelOff):
    pass


class TestStoreTestFailuresAsProjectLevelView(StoreTestFailuresAsProjectLevelView):
    pass


class TestStoreTestFailuresAsProjectLevelEphemeral(StoreTestFailuresAsProjectLevelEphemeral):
    pass


class TestStoreTestFailuresAsGeneric(StoreTestFailuresAsGeneric):
    pass


class TestStoreTestFailuresAsExceptions(StoreTestFailuresAsExceptions):
    pass


class TestStoreTestFailures(BaseStoreTestFailures):
    pass


class TestStoreTestFailuresLimit(BaseStoreTestFailuresLimit):
    pass


UPPER_CASE_TEST = """
{{ config(store_failures=true) }}
select * from {{ ref('Chipmunks') }} where shirt is null
"""
UPPER_CASE_MODEL = "{{ config(materialized='table') }} select * from {{ ref('chipmunks_stage') }}"
UPPER_CASE_PROPERTIES = """
version: 2
models:
  - name: Chipmunks
    columns:
      - name: shirt
        data_tests:
          - not_null:
              config:
                store_failures: true
"""


class TestStoreFailuresUpperCaseNames:
    """`--store-failures` for tests whose names have upper-case letters (a singular test file
    `No_Shirt.sql`, a generic test on the model `Chipmunks`): stored under the lower-cased name."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"chipmunks_stage.csv": "name,shirt\nalvin,red\ndave,\n"}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"Chipmunks.sql": UPPER_CASE_MODEL, "schema.yml": UPPER_CASE_PROPERTIES}

    @pytest.fixture(scope="class")
    def tests(self) -> dict[str, str]:
        return {"No_Shirt.sql": UPPER_CASE_TEST}

    def test_stored_under_lower_case_names(self, project, lancens_root: str) -> None:
        run_dbt(["seed"])
        run_dbt(["run"])
        results = run_dbt(["test", "--store-failures"], expect_pass=False)
        assert sorted((r.node.name, r.status, r.failures) for r in results) == [
            ("No_Shirt", "fail", 1),
            ("not_null_Chipmunks_shirt", "fail", 1),
        ]
        namespace = DirectoryNamespace(lancens_root)
        audit = [f"{project.test_schema}_dbt_test__audit"]
        assert sorted(namespace.list_tables(audit).items) == ["no_shirt", "not_null_chipmunks_shirt"]
        stored = lance.dataset(namespace.describe_table([*audit, "no_shirt"]).location).to_table()
        assert stored.to_pylist() == [{"name": "dave", "shirt": None}]
        # a second run stores the failures again (dbt's test materialization re-creates the table)
        run_dbt(["test", "--store-failures"], expect_pass=False)
        assert sorted(namespace.list_tables(audit).items) == ["no_shirt", "not_null_chipmunks_shirt"]
        stored = lance.dataset(namespace.describe_table([*audit, "no_shirt"]).location).to_table()
        assert stored.to_pylist() == [{"name": "dave", "shirt": None}]
