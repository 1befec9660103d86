"""dbt-tests-adapter's concurrency suite: many models on several dbt threads sharing one SparkSession."""

from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency


class TestConcurrency(BaseConcurrency):
    pass
