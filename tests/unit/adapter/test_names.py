"""dbt schema and table names map to namespace ids, and bad names fail with the level named."""

import re

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.definitions.names import (
    database_name,
    namespace_id,
    namespace_to_schema,
    schema_to_namespace,
    table_id,
)


@pytest.mark.parametrize(
    ("schema", "levels", "database"),
    [
        ("analytics", ["analytics"], "analytics"),
        ("analytics.marts", ["analytics", "marts"], "analytics__marts"),
        ("a.b_c.d1", ["a", "b_c", "d1"], "a__b_c__d1"),
        # dbt's default audit schema: a run of underscores inside a level gets one more in Spark
        ("analytics_dbt_test__audit", ["analytics_dbt_test__audit"], "analytics_dbt_test___audit"),
        ("a.b___c", ["a", "b___c"], "a__b____c"),
    ],
)
def test_schema_maps_to_namespace_and_back(schema: str, levels: list[str], database: str) -> None:
    assert schema_to_namespace(schema) == levels
    assert namespace_to_schema(levels) == schema
    assert database_name(levels) == database
    assert namespace_id(database) == levels


def test_names_are_lower_cased() -> None:
    assert schema_to_namespace("Analytics.Marts") == ["analytics", "marts"]
    assert table_id("Analytics", "DailyTotals") == ["analytics", "dailytotals"]
    assert namespace_id("Analytics__Marts") == ["analytics", "marts"]


@pytest.mark.parametrize("schema", ["", "a..b", "a.__b", "a._b", "a.b_", "a.b-c", "a.b$c", "a/b", "a.b c"])
def test_bad_schema_names_are_rejected_with_the_level_named(schema: str) -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        schema_to_namespace(schema)
    assert "schema" in str(raised.value)


def test_table_id_validates_the_table_name() -> None:
    assert table_id("analytics.marts", "orders") == ["analytics", "marts", "orders"]
    # Only namespace levels are joined with `__`: a table name may contain it.
    assert table_id("analytics", "one_str__overwrite") == ["analytics", "one_str__overwrite"]
    for bad in ("a-b", "a.b", "a$b", "a b", ""):
        with pytest.raises(DbtRuntimeError, match=re.escape(f"Invalid table name {bad!r}")):
            table_id("analytics", bad)


@pytest.mark.parametrize(
    "levels", [[], ["sales"], ["sales", "eu"], ["a_b", "c1", "d"], ["a__b"], ["a___b", "c__d", "e"]]
)
def test_database_names_are_reversible(levels: list[str]) -> None:
    assert namespace_id(database_name(levels)) == levels


@pytest.mark.parametrize("bad", ["_a", "a_", "Sales", ""])
def test_ambiguous_levels_are_rejected_by_name(bad: str) -> None:
    with pytest.raises(ValueError, match=repr(bad)):
        database_name(["ok", bad])


def test_top_level_default_is_reserved_for_the_root() -> None:
    with pytest.raises(ValueError, match="'default'"):
        database_name(["default"])


def test_table_id_refuses_what_the_engine_refuses() -> None:
    """The engine's own id rule runs with the name rule, so dbt's parse refuses such a name (and not
    the run's write, with error 13): an id too long for a table directory, the manifest's own name."""
    assert table_id("analytics", "t" * 236) == ["analytics", "t" * 236]  # 246 bytes joined with `$`
    with pytest.raises(DbtRuntimeError, match=r"is 247 bytes joined with '\$'; at most 246 fit"):
        table_id("analytics", "t" * 237)
    with pytest.raises(DbtRuntimeError, match="'__manifest' is reserved"):
        table_id("analytics", "__manifest")
