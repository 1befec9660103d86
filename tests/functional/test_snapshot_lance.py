"""Snapshot options the suite runs only through its Postgres-only classes, read back with pylance:
`snapshot_meta_column_names`, a two-column `unique_key` and `dbt_valid_to_current`."""

from __future__ import annotations

import datetime as dt

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

SNAPSHOTS_YML = """
snapshots:
  - name: people_history
    relation: source('app', 'people')
    config:
      strategy: timestamp
      updated_at: updated_at
      unique_key: [region, id]
      dbt_valid_to_current: "timestamp('9999-12-31 00:00:00')"
      snapshot_meta_column_names:
        dbt_valid_from: valid_from
        dbt_valid_to: valid_to
        dbt_scd_id: scd_id
        dbt_updated_at: changed_at
"""
SOURCES_YML = """
sources:
  - name: app
    schema: "{{ target.schema }}"
    tables:
      - name: people
"""
CURRENT = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)  # Spark timestamps are UTC in Lance


class TestSnapshotOptionsOnLance:
    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshots.yml": SNAPSHOTS_YML}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"sources.yml": SOURCES_YML}

    def test_meta_names_two_column_key_and_valid_to_current(self, project, lancens_root: str) -> None:
        schema = project.test_schema
        project.run_sql(
            f"create table {schema}.people (region STRING, id INT, name STRING, updated_at TIMESTAMP)"
        )
        project.run_sql(
            f"insert into {schema}.people values ('eu', 1, 'ann', timestamp'2024-01-01 00:00:00'), "
            "('us', 1, 'bob', timestamp'2024-01-01 00:00:00')"
        )
        run_dbt(["snapshot"])
        info = DirectoryNamespace(lancens_root).describe_table([schema, "people_history"])
        first = lance.dataset(info.location)
        assert {"valid_from", "valid_to", "scd_id", "changed_at"} <= set(first.schema.names)
        assert not {"dbt_valid_from", "dbt_valid_to", "dbt_scd_id", "dbt_updated_at"} & set(
            first.schema.names
        )
        assert [r["valid_to"] for r in first.to_table().to_pylist()] == [CURRENT, CURRENT]

        # same id in another region is another key: only ('eu', 1) changes
        project.run_sql(
            f"update {schema}.people set name = 'anna', updated_at = timestamp'2024-02-01 00:00:00' "
            "where region = 'eu' and id = 1"
        )
        run_dbt(["snapshot"])
        latest = lance.dataset(info.location)
        assert latest.version == first.version + 1  # one commit per snapshot run
        rows = sorted((r["region"], r["id"], r["name"], r["valid_to"]) for r in latest.to_table().to_pylist())
        assert rows == [
            ("eu", 1, "ann", dt.datetime(2024, 2, 1, tzinfo=dt.UTC)),
            ("eu", 1, "anna", CURRENT),
            ("us", 1, "bob", CURRENT),
        ]
        scd_ids = latest.to_table().column("scd_id").to_pylist()
        assert len(set(scd_ids)) == 3


DUPLICATES_YML = """
snapshots:
  - name: dupes_history
    relation: source('app', 'dupes')
    config:
      strategy: timestamp
      updated_at: updated_at
      unique_key: id
"""
DUPES_SOURCE_YML = """
sources:
  - name: app
    schema: "{{ target.schema }}"
    tables:
      - name: dupes
"""


class TestSnapshotOfANonUniqueKey:
    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshots.yml": DUPLICATES_YML}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"sources.yml": DUPES_SOURCE_YML}

    def test_a_repeated_key_fails_every_run_naming_it_and_writes_nothing(
        self, project, lancens_root: str
    ) -> None:
        """dbt requires `unique_key` to be unique in the snapshot's query. The first run fails,
        naming the repeated key, before the table exists (it stored two current records for the
        key before); a later run whose source repeats a key fails the same way, the table
        unchanged, not one version added (a new column is not added either)."""
        schema = project.test_schema
        table = [schema, "dupes_history"]
        project.run_sql(f"create table {schema}.dupes (id INT, name STRING, updated_at TIMESTAMP)")
        project.run_sql(
            f"insert into {schema}.dupes values (1, 'a', timestamp'2024-01-01 00:00:00'), "
            "(1, 'b', timestamp'2024-01-01 00:00:00'), (2, 'c', timestamp'2024-01-01 00:00:00')"
        )
        results = run_dbt(["snapshot"], expect_pass=False)
        assert "unique_key (id) is not unique" in results[0].message
        assert "(1): 2 rows" in results[0].message
        assert not DirectoryNamespace(lancens_root).table_exists(table)

        project.run_sql(f"delete from {schema}.dupes where name = 'b'")
        run_dbt(["snapshot"])
        info = DirectoryNamespace(lancens_root).describe_table(table)
        project.run_sql(f"alter table {schema}.dupes add columns (extra STRING)")
        project.run_sql(
            f"insert into {schema}.dupes values (2, 'd', timestamp'2024-02-01 00:00:00', 'x'), "
            "(2, 'e', timestamp'2024-02-01 00:00:00', 'y')"
        )
        results = run_dbt(["snapshot"], expect_pass=False)
        assert "(2): 3 rows" in results[0].message
        after = lance.dataset(info.location)
        assert after.version == info.version
        assert sorted(row["name"] for row in after.to_table().to_pylist()) == ["a", "c"]
