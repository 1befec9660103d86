"""`dbt build --empty`: every materialization builds from zero-row inputs, schemas intact.

Tables and views of an empty run have the model's columns and no rows; an incremental model that
exists keeps its rows (an empty batch changes nothing), with its schema change applied as
`on_schema_change` says; snapshots keep their rows. Read back with pylance.
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

SEED_CSV = "id,name,updated_at\n1,a,2024-01-01 00:00:00\n2,b,2024-01-02 00:00:00\n"
TABLE = "{{ config(materialized='table') }} select id, name from {{ ref('people') }}"
VIEW = "{{ config(materialized='view') }} select id, upper(name) as name from {{ ref('people') }}"
EPHEMERAL = "{{ config(materialized='ephemeral') }} select id from {{ ref('people') }}"
FROM_EPHEMERAL = "{{ config(materialized='table') }} select * from {{ ref('ephemeral_ids') }}"
APPEND = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, name{% if var('round', 1) == 2 %}, 'x' as extra{% endif %} from {{ ref('people') }}
"""
MERGE_APPEND_COLUMNS = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
select id, name{% if var('round', 1) == 2 %}, 'x' as extra{% endif %} from {{ ref('people') }}
"""
MERGE_SYNC = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
select id{% if var('round', 1) == 1 %}, name{% else %}, 'x' as extra{% endif %} from {{ ref('people') }}
"""
MERGE_FAIL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='fail') }}
select id, name from {{ ref('people') }}
"""
OVERWRITE = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}
select id, name from {{ ref('people') }}
"""
OVERWRITE_PARTITIONS = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by='name') }}
select id, name from {{ ref('people') }}
"""
DELETE_INSERT = """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='id') }}
select id, name from {{ ref('people') }}
"""
MICROBATCH = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='updated_at',
          batch_size='day', begin='2024-01-01', lookback=0) }}
select id, updated_at from {{ ref('people') }}
"""
PYTHON = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.ref("people").select("id")
"""
SNAPSHOTS = {
    "people_ts.sql": """
{% snapshot people_ts %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at') }}
select * from {{ ref('people') }}
{% endsnapshot %}
""",
    "people_check.sql": """
{% snapshot people_check %}
{{ config(unique_key='id', strategy='check', check_cols=['name']) }}
select * from {{ ref('people') }}
{% endsnapshot %}
""",
    "people_invalidate.sql": """
{% snapshot people_invalidate %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at', hard_deletes='invalidate') }}
select * from {{ ref('people') }}
{% endsnapshot %}
""",
    "people_new_record.sql": """
{% snapshot people_new_record %}
{{ config(unique_key='id', strategy='check', check_cols=['name'], hard_deletes='new_record') }}
select * from {{ ref('people') }}
{% endsnapshot %}
""",
}
# snapshots whose sources read no rows under --empty would otherwise close every current record
HARD_DELETES = ("people_invalidate", "people_new_record")


# the microbatch model's two days (without it, a backfill from `begin` to today)
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]


def _failures(results) -> list[tuple[str, str]]:
    return [(r.node.name, r.message) for r in results if r.status not in ("success", "pass")]


class TestBuildEmpty:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        # the microbatch model's batches read only their day of the seed
        return {"seeds": {"+event_time": "updated_at"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "a_table.sql": TABLE,
            "a_view.sql": VIEW,
            "ephemeral_ids.sql": EPHEMERAL,
            "from_ephemeral.sql": FROM_EPHEMERAL,
            "inc_append.sql": APPEND,
            "inc_merge_append_columns.sql": MERGE_APPEND_COLUMNS,
            "inc_merge_sync.sql": MERGE_SYNC,
            "inc_merge_fail.sql": MERGE_FAIL,
            "inc_overwrite.sql": OVERWRITE,
            "inc_overwrite_partitions.sql": OVERWRITE_PARTITIONS,
            "inc_delete_insert.sql": DELETE_INSERT,
            "inc_microbatch.sql": MICROBATCH,
            "a_python.py": PYTHON,
        }

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return SNAPSHOTS

    def _table(self, project, lancens_root: str, name: str) -> lance.LanceDataset:
        info = DirectoryNamespace(lancens_root).describe_table([project.test_schema, name])
        return lance.dataset(info.location)

    def _count(self, project, name: str) -> int:
        return project.run_sql(f"select count(*) from {project.test_schema}.{name}", fetch="one")[0]

    def test_build_empty_then_full_then_empty(self, project, lancens_root: str) -> None:
        # a first build with --empty: every node succeeds; models have their columns and no rows
        results = run_dbt(["build", "--empty", *WINDOW])
        assert all(r.status in ("success", "pass") for r in results), [
            (r.node.name, r.message) for r in results
        ]
        for name in ("a_table", "from_ephemeral", "inc_append", "inc_merge_sync", "a_python"):
            assert self._table(project, lancens_root, name).count_rows() == 0, name
        assert self._table(project, lancens_root, "a_table").schema.names == ["id", "name"]
        assert self._count(project, "a_view") == 0
        for name in ("people_ts", "people_check"):
            snapshot = self._table(project, lancens_root, name)
            assert snapshot.count_rows() == 0 and "dbt_scd_id" in snapshot.schema.names

        # a real build fills everything
        run_dbt(["build", "--full-refresh", *WINDOW])
        snapshot_versions = {}
        for name in HARD_DELETES:
            snapshot = self._table(project, lancens_root, name)
            snapshot_versions[name] = snapshot.version
            assert snapshot.count_rows() == 2, name
        for name in (
            "a_table",
            "inc_append",
            "inc_merge_append_columns",
            "inc_merge_sync",
            "people_ts",
            "inc_overwrite",
            "inc_overwrite_partitions",
            "inc_delete_insert",
            "inc_microbatch",
        ):
            assert self._table(project, lancens_root, name).count_rows() == 2, name

        # an empty build over existing tables: tables/views empty, incremental rows and snapshots kept,
        # on_schema_change applied (round 2 adds `extra`, sync drops `name`); no strategy deletes rows
        # the empty run never read (insert_overwrite used to empty its table, microbatch its window)
        # or commits a version without a schema change
        unchanged = ("inc_overwrite", "inc_overwrite_partitions", "inc_delete_insert", "inc_microbatch")
        versions = {name: self._table(project, lancens_root, name).version for name in unchanged}
        results = run_dbt(["build", "--empty", "--vars", "{round: 2}", *WINDOW])
        assert all(r.status in ("success", "pass") for r in results), [
            (r.node.name, r.message) for r in results
        ]
        assert self._table(project, lancens_root, "a_table").count_rows() == 0
        appended = self._table(project, lancens_root, "inc_merge_append_columns")
        assert appended.count_rows() == 2 and "extra" in appended.schema.names
        synced = self._table(project, lancens_root, "inc_merge_sync")
        assert synced.count_rows() == 2 and synced.schema.names == ["id", "extra"]
        assert self._table(project, lancens_root, "inc_append").count_rows() == 2
        assert self._table(project, lancens_root, "inc_merge_fail").count_rows() == 2
        for name in ("people_ts", "people_check"):
            assert self._table(project, lancens_root, name).count_rows() == 2, name
        for name in HARD_DELETES:
            snapshot = self._table(project, lancens_root, name)
            assert snapshot.version == snapshot_versions[name], name
            assert snapshot.to_table().column("dbt_valid_to").null_count == 2, name
        for name in unchanged:
            table = self._table(project, lancens_root, name)
            assert (table.count_rows(), table.version) == (2, versions[name]), name
