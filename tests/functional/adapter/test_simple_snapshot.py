"""dbt-tests-adapter's simple_snapshot classes with the lancens profile.

Every class whose source-table SQL comes from a fixture runs here, with that fixture's statements
put into Spark SQL by `spark_sql` (the suite writes them for Postgres: `TEXT`, `TIMESTAMP WITHOUT
TIME ZONE`, `'…'` strings stored into timestamp columns, `{database}.{schema}` three-part names,
`DEFAULT` in `ALTER TABLE`). The statements still run through dbt-lancens: `CREATE TABLE` and
`ALTER TABLE ... ADD COLUMN` become namespace operations, `INSERT`, `UPDATE` and `DELETE` Lance
commits (README "DDL" and "Snapshots").

test_various_configs.py passes its statements straight to `project.run_sql`: its classes run in
test_snapshot_configs.py.
"""

from __future__ import annotations

import re

import pytest
from dbt.tests.adapter.simple_snapshot import new_record_dbt_valid_to_current as valid_to_current
from dbt.tests.adapter.simple_snapshot import new_record_timestamp_mode as timestamp_mode
from dbt.tests.adapter.simple_snapshot import test_ephemeral_snapshot_hard_deletes as hard_deletes
from dbt.tests.adapter.simple_snapshot.new_record_check_mode import BaseSnapshotNewRecordCheckMode
from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck

_TIMESTAMP_STRING = re.compile(r"'(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})'")


def spark_sql(statement: str) -> str:
    """The suite's Postgres statement in Spark SQL (same tables, columns and values)."""
    statement = statement.replace("{database}.", "").replace("{{target.database}}.", "")
    statement = statement.replace("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP")
    statement = re.sub(r"\bTEXT\b", "STRING", statement)
    statement = statement.replace("::text", "::string")
    statement = re.sub(r"\s+default\s+'[^']*'", "", statement, flags=re.IGNORECASE)
    return _TIMESTAMP_STRING.sub(r"timestamp'\1'", statement)


class TestSimpleSnapshot(BaseSimpleSnapshot):
    pass


class TestSnapshotCheck(BaseSnapshotCheck):
    pass


class NewRecordFixtures:
    """The new_record classes' statements, in Spark SQL."""

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshot.sql": spark_sql(timestamp_mode._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self) -> list[str]:
        return [spark_sql(s) for s in timestamp_mode._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def invalidate_sql_statements(self) -> list[str]:
        return [spark_sql(s) for s in timestamp_mode._invalidate_sql_statements]

    @pytest.fixture(scope="class")
    def update_sql(self) -> str:
        return spark_sql(timestamp_mode._update_sql)

    @pytest.fixture(scope="class")
    def delete_sql(self) -> str:
        return spark_sql(timestamp_mode._delete_sql)

    @pytest.fixture(scope="class")
    def reinsert_sql(self) -> str:
        return spark_sql(timestamp_mode._reinsert_sql)


class TestSnapshotNewRecordTimestampMode(
    NewRecordFixtures, timestamp_mode.BaseSnapshotNewRecordTimestampMode
):
    pass


class TestSnapshotNewRecordCheckMode(NewRecordFixtures, BaseSnapshotNewRecordCheckMode):
    pass


class TestSnapshotNewRecordDbtValidToCurrent(valid_to_current.BaseSnapshotNewRecordDbtValidToCurrent):
    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snapshot.sql": spark_sql(valid_to_current._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self) -> list[str]:
        return [spark_sql(s) for s in valid_to_current._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def delete_sql(self) -> str:
        return spark_sql(valid_to_current._delete_sql)


class SourceTableFixtures:
    """The hard-delete / new-column classes' source statements, in Spark SQL."""

    @pytest.fixture(scope="class")
    def source_create_sql(self) -> str:
        return spark_sql(hard_deletes._source_create_sql)

    @pytest.fixture(scope="class")
    def source_insert_sql(self) -> str:
        return spark_sql(hard_deletes._source_insert_sql)

    @pytest.fixture(scope="class")
    def source_alter_sql(self) -> str:
        return spark_sql(hard_deletes._source_alter_sql)

    @pytest.fixture(scope="class")
    def source_delete_sql(self) -> str:
        return spark_sql(hard_deletes._source_delete_sql)


class TestSnapshotEphemeralHardDeletes(SourceTableFixtures, hard_deletes.BaseSnapshotEphemeralHardDeletes):
    pass


class TestSnapshotNewColumnTimestampStrategy(
    SourceTableFixtures, hard_deletes.BaseSnapshotNewColumnTimestampStrategy
):
    pass


class TestSnapshotNewColumnSpecificCheckCols(
    SourceTableFixtures, hard_deletes.BaseSnapshotNewColumnSpecificCheckCols
):
    pass


class TestSnapshotNewColumnWithDeletes(SourceTableFixtures, hard_deletes.BaseSnapshotNewColumnWithDeletes):
    pass
