"""dbt-tests-adapter's aliases suite: `alias` names the Lance table a model becomes.

The suite's `string_literal` macro casts to Postgres' `text`; dbt's own `string_literal` (a plain
Spark string literal) is used instead, as other adapters do. BaseSameAliasDifferentDatabases needs a
second database, which a namespace root does not have (docs/dbt-features.md).
"""

import pytest
from dbt.tests.adapter.aliases import fixtures
from dbt.tests.adapter.aliases.test_aliases import (
    BaseAliasErrors,
    BaseAliases,
    BaseSameAliasDifferentSchemas,
)


class DbtStringLiteral:
    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"expect_value.sql": fixtures.MACROS__EXPECT_VALUE_SQL}


class TestAliases(DbtStringLiteral, BaseAliases):
    pass


class TestAliasErrors(DbtStringLiteral, BaseAliasErrors):
    pass


class TestSameAliasDifferentSchemas(DbtStringLiteral, BaseSameAliasDifferentSchemas):
    pass
