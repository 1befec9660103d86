"""dbt-tests-adapter's incremental classes with the lancens profile: every class in `incremental/`.

BaseIncrementalUniqueKey gets its `seeds` fixture with typed date literals: the suite's INSERTs put
'2022-02-01' strings into a date column, which Spark's ANSI store assignment refuses (README
"Incremental models and snapshots on Lance").
"""

import re

import pytest
from dbt.tests.adapter.incremental import test_incremental_unique_id as unique_id
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import BaseIncrementalOnSchemaChange
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates


def _typed_dates(sql: str) -> str:
    """The suite's INSERT statements with `date'…'` literals instead of bare date strings."""
    return re.sub(r"'(\d{4}-\d{2}-\d{2})'", r"date'\1'", sql)


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestMicrobatch(BaseMicrobatch):
    pass


class TestPredicatesDeleteInsert(BaseIncrementalPredicates):
    pass


class TestPredicatesMerge(BaseIncrementalPredicates):
    """The same predicates with the merge strategy (what dbt-core's own suite does for merge adapters)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }


class TestIncrementalUniqueKey(unique_id.BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {
            "duplicate_insert.sql": _typed_dates(unique_id.seeds__duplicate_insert_sql),
            "seed.csv": unique_id.seeds__seed_csv,
            "add_new_rows.sql": _typed_dates(unique_id.seeds__add_new_rows_sql),
        }


class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChange):
    pass
