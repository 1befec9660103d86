"""dbt-tests-adapter's incremental classes with the lancens profile.

Left out (see README "Incremental models and snapshots"): BaseIncrementalUniqueKey (its seed
fixtures INSERT date strings into a date column, which Spark's ANSI store assignment refuses) and
BaseIncrementalOnSchemaChange (a model that stops selecting a column written as non-nullable
cannot null it on Lance).
"""

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates


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
