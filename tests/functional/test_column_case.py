"""Column names in another case than the table's, as Spark SQL accepts them (one rule:
`spark/column_names.py`): configs, statements and model results that spell a column `ID` for the
table's `id` change the right column and never add a second one."""

from __future__ import annotations

from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.commits import writes
from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.statements import dml, route

# Round 1 builds the table as `id, amount, note`; round 2 spells the columns in other cases, adds
# `Extra`, updates id 2 and inserts id 3.
MERGED = """
{{ config(materialized='incremental', unique_key='ID', on_schema_change='append_new_columns',
          merge_exclude_columns=['NOTE']) }}
{% if var('round', 1) == 1 %}
select 1 as id, 10 as amount, 'a' as note union all select 2 as id, 20 as amount, 'b' as note
{% else %}
select 2 as ID, 25 as Amount, 'changed' as Note, 'x' as Extra
union all select 3 as ID, 30 as Amount, 'c' as Note, 'y' as Extra
{% endif %}
"""

DELETE_INSERT = """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='Key') }}
{% if var('round', 1) == 1 %}
select 1 as key, 'p' as v union all select 2 as key, 'q' as v
{% else %}
select 2 as KEY, 'r' as V union all select 2 as KEY, 's' as V
{% endif %}
"""


class TestColumnCaseInModels:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"merged.sql": MERGED, "delete_insert.sql": DELETE_INSERT}

    def _table(self, project, lancens_root: str, name: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
        return lance.dataset(info.location)

    def test_incremental_configs_and_results_in_another_case(self, project, lancens_root: str) -> None:
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{round: 2}"])

        merged = self._table(project, lancens_root, "merged")
        assert merged.schema.names == ["id", "amount", "note", "Extra"]
        assert sorted(merged.to_table().to_pylist(), key=lambda row: row["id"]) == [
            {"id": 1, "amount": 10, "note": "a", "Extra": None},
            {"id": 2, "amount": 25, "note": "b", "Extra": "x"},  # NOTE excluded: the table's note kept
            {"id": 3, "amount": 30, "note": "c", "Extra": "y"},
        ]

        pairs = self._table(project, lancens_root, "delete_insert")
        assert pairs.schema.names == ["key", "v"]
        assert sorted((row["key"], row["v"]) for row in pairs.to_table().to_pylist()) == [
            (1, "p"),
            (2, "r"),
            (2, "s"),
        ]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path)}, "local[2]", {})
    runtime.namespace.create_namespace(["s"])
    frame = runtime.sql("SELECT id, concat('n', id) AS name, id * 2 AS doubled FROM range(4)")
    writes.write_frame(runtime, ["s", "t"], frame, "overwrite", {})
    return runtime


def _table(runtime: LancensRuntime) -> lance.LanceDataset:
    return lance.dataset(runtime.namespace.describe_table(["s", "t"]).location)


def test_update_and_alter_name_columns_in_another_case(runtime: LancensRuntime) -> None:
    dml.execute(runtime, "UPDATE s.t SET NAME = upper(Name) WHERE ID = 1")
    assert _table(runtime).to_table().column("name").to_pylist() == ["n0", "N1", "n2", "n3"]

    assert route.apply(runtime, "ALTER TABLE s.t DROP COLUMN DOUBLED")
    assert route.apply(runtime, "ALTER TABLE s.t ALTER COLUMN ID TYPE string")
    table = _table(runtime)
    assert table.schema.names == ["id", "name"]
    assert str(table.schema.field("id").type) == "string"
    assert table.to_table().column("id").to_pylist() == ["0", "1", "2", "3"]
    assert table.version == 4
