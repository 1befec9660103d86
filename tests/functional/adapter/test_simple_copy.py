"""dbt-tests-adapter's simple_copy suite.

Not run: `test_simple_copy_with_materialized_views` (Spark has no materialized views outside a
declarative pipeline), EmptyModelsArentRunBase (reads Postgres' `information_schema.tables`) and
BaseSimpleCopyUppercase (builds a Postgres profile); see docs/dbt-features.md.
"""

from dbt.tests.adapter.simple_copy.test_simple_copy import SimpleCopyBase


class TestSimpleCopy(SimpleCopyBase):
    # pytest collects callables only: the materialized-view variant is not collected
    test_simple_copy_with_materialized_views = None
