"""dbt-tests-adapter's dbt_show suite."""

from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    """Spark's parser words the error differently from Postgres."""

    DATABASE_ERROR_MESSAGE = "Syntax error at or near 'limit'"
