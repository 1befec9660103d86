"""dbt's column type predicates on the Spark type names dbt-lancens reports."""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.definitions.column import LancensColumn


@pytest.mark.parametrize(
    ("dtype", "kinds"),
    [
        ("string", {"string"}),
        ("varchar(20)", {"string"}),
        ("char(3)", {"string"}),
        ("tinyint", {"integer", "number"}),
        ("smallint", {"integer", "number"}),
        ("int", {"integer", "number"}),
        ("bigint", {"integer", "number"}),
        ("float", {"float", "number"}),
        ("double", {"float", "number"}),
        ("decimal(10,2)", {"numeric", "number"}),
        ("boolean", set()),
        ("date", set()),
        ("timestamp", set()),
        ("array<int>", set()),
    ],
)
def test_type_predicates(dtype: str, kinds: set[str]) -> None:
    column = LancensColumn(column="c", dtype=dtype)
    actual = {
        kind
        for kind, check in (
            ("string", column.is_string),
            ("integer", column.is_integer),
            ("float", column.is_float),
            ("numeric", column.is_numeric),
            ("number", column.is_number),
        )
        if check()
    }
    assert actual == kinds
