"""dbt-tests-adapter's simple_snapshot classes with the lancens profile.

Left out: the classes whose fixtures create their source tables with Postgres DDL (`TEXT`,
`VARCHAR(50)`, `{database}.{schema}` with no database on lancens) and `ALTER TABLE`:
BaseSnapshotColumnNames*, BaseSnapshotInvalidColumnNames, BaseSnapshotDbtValidToCurrent,
BaseSnapshotMultiUniqueKey, BaseSnapshotNewRecord*, BaseSnapshotEphemeralHardDeletes,
BaseSnapshotNewColumn*.
"""

from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck


class TestSimpleSnapshot(BaseSimpleSnapshot):
    pass


class TestSnapshotCheck(BaseSnapshotCheck):
    pass
