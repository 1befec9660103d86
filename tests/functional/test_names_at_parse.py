"""Names dbt-lancens refuses when dbt parses the project, naming the node: two nodes that name one
namespace table, and a name too long for the namespace.

A dbt name maps to its lower-cased id (`definitions/names.py`), so `good.sql` and an alias `GOOD`
are one table, and so are `k.sql` and an alias `K` (U+212A KELVIN SIGN, lower-cased to `k`).
Without the check the second build silently replaced the first's rows. The relation of a node that
writes carries its table id as its identifier, so dbt's own check of two nodes with one database
representation (`AmbiguousAliasError`) sees the collision: models, seeds and snapshots, tables and
views alike. An ephemeral model writes nothing and keeps its spelling, so it collides with no table.
A 300-character alias was refused only when the run wrote the table (engine error 13).
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.namespace import DirectoryNamespace

GOOD = "{{ config(materialized='table') }} select 1 as id, 'from_good_model' as src"
CASE = "{{ config(materialized='table', alias='GOOD') }} select 99 as id, 'from_case_model' as src"
KELVIN = "{{ config(materialized='view', alias='\u212a') }} select 2 as id"
PLAIN_K = "{{ config(materialized='table') }} select 1 as id"
SEED_CSV = "id,src\n1,seed\n"
SNAPSHOTS_YML = """
snapshots:
  - name: ITEMS
    relation: ref('source_rows')
    config:
      strategy: check
      check_cols: all
      unique_key: id
"""


def _assert_refused(project, lancens_root: str, *nodes: str) -> None:
    """`dbt parse` and `dbt run` both fail naming every node, and the schema stays empty."""
    for command in (["parse"], ["run"], ["build"]):
        with pytest.raises(CompilationError) as raised:
            run_dbt(command)
        message = str(raised.value)
        assert "two resources with the database representation" in message, message
        for node in nodes:
            assert node in message, message
    namespace = DirectoryNamespace(lancens_root)
    assert namespace.list_tables([project.test_schema]).items == []
    assert namespace.list_views([project.test_schema]).items == []


class TestAliasInAnotherCase:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"good.sql": GOOD, "case.sql": CASE}

    def test_refused_naming_both_models(self, project, lancens_root: str) -> None:
        _assert_refused(project, lancens_root, "model.test.good", "model.test.case")


class TestKelvinSignAlias:
    """A view aliased `K` (KELVIN SIGN) and a table `k`: a view and a table alike."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"k.sql": PLAIN_K, "kelvin.sql": KELVIN}

    def test_refused_naming_both_models(self, project, lancens_root: str) -> None:
        _assert_refused(project, lancens_root, "model.test.k", "model.test.kelvin")


class TestSeedAndModel:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"Good.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"good.sql": GOOD}

    def test_refused_naming_the_seed_and_the_model(self, project, lancens_root: str) -> None:
        _assert_refused(project, lancens_root, "seed.test.Good", "model.test.good")


class TestSnapshotAndModel:
    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshots.yml": SNAPSHOTS_YML}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"source_rows.sql": GOOD, "items.sql": GOOD}

    def test_refused_naming_the_snapshot_and_the_model(self, project, lancens_root: str) -> None:
        _assert_refused(project, lancens_root, "snapshot.test.ITEMS", "model.test.items")


class TestEphemeralInAnotherCase:
    """An ephemeral model is a CTE: its alias `GOOD` takes no table, so `good.sql` builds."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "good.sql": GOOD,
            "cte.sql": "{{ config(materialized='ephemeral', alias='GOOD') }} select 7 as id",
            "reads_cte.sql": "{{ config(materialized='table') }} select id from {{ ref('cte') }}",
        }

    def test_builds(self, project, lancens_root: str) -> None:
        results = run_dbt(["run"])
        assert {r.node.name: r.status for r in results} == {"good": "success", "reads_cte": "success"}
        namespace = DirectoryNamespace(lancens_root)
        assert sorted(namespace.list_tables([project.test_schema]).items) == ["good", "reads_cte"]
        good = namespace.describe_table([project.test_schema, "good"]).location
        assert lance.dataset(good).to_table().to_pylist() == [{"id": 1, "src": "from_good_model"}]


class TestAliasTooLong:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"good.sql": GOOD, "long.sql": f"{{{{ config(alias='{'l' * 300}') }}}} select 1 as id"}

    def test_refused_when_dbt_parses_naming_the_node(self, project, lancens_root: str) -> None:
        for command in (["parse"], ["run"]):
            with pytest.raises(CompilationError) as raised:
                run_dbt(command)
            message = str(raised.value)
            assert "Invalid table name" in message and "at most 246 fit" in message, message
            assert "model.test.long" in message or "models/long.sql" in message, message
        assert DirectoryNamespace(lancens_root).list_tables([project.test_schema]).items == []
