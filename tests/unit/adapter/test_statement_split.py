"""A script of several statements is run one statement at a time (definitions/sql_text.py).

Spark's parser reads `set time zone 'x';select 1` as one malformed statement, and `set k = v;
select 1` as the setting `k` with the value `v;select 1`, so the connection splits first.
"""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.definitions.sql_text import statements


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("select 1", ["select 1"]),
        ("select 1;", ["select 1"]),
        ("  select 1 ;  ", ["select 1"]),
        ("set time zone 'Asia/Kolkata';select 2", ["set time zone 'Asia/Kolkata'", "select 2"]),
        ("set a.b = c;\nset d = e;\nselect 3;", ["set a.b = c", "set d = e", "select 3"]),
        # Semicolons inside strings, identifiers and comments do not end a statement.
        ("select 'a;b' as x", ["select 'a;b' as x"]),
        ("select `c;d` from t", ["select `c;d` from t"]),
        ("select 1 -- done; really\n, 2", ["select 1 -- done; really\n, 2"]),
        ('/* {"app": "dbt"} */\nset x = 1;\nselect 4', ['/* {"app": "dbt"} */\nset x = 1', "select 4"]),
        # Macros that write through the engine leave comments only: nothing to run.
        ("/* dbt */\n-- dbt-lancens: written by the engine", []),
        (";;", []),
        ("", []),
    ],
)
def test_statements(script: str, expected: list[str]) -> None:
    assert statements(script) == expected
