"""UPDATE, DELETE and INSERT statements on namespace tables, each one new Lance version."""

from __future__ import annotations

from pathlib import Path

import lance
import pytest

from dbt.adapters.lancens.commits import writes
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.statements import dml, route


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path)}, "local[2]", {})
    runtime.namespace.create_namespace(["s"])
    frame = runtime.sql(
        "SELECT id, concat('n', id) AS name, DATE'2024-01-01' + CAST(id AS INT) AS day FROM range(10)"
    )
    writes.write_frame(runtime, ["s", "t"], frame, "overwrite", {})
    return runtime


def rows(runtime: LancensRuntime) -> dict[int, tuple]:
    table = lance.dataset(runtime.namespace.describe_table(["s", "t"]).location).to_table()
    return {row["id"]: (row["name"], row["day"]) for row in table.to_pylist()}


def test_update_changes_matching_rows_in_one_version(runtime: LancensRuntime) -> None:
    version = dml.execute(runtime, "/* dbt */ UPDATE s.t SET name = name || '_x', day = day + 1 WHERE id > 6")
    assert version == 2
    after = rows(runtime)
    assert after[6][0] == "n6" and after[7][0] == "n7_x"
    assert (after[9][1] - after[8][1]).days == 1 and after[9][1].isoformat() == "2024-01-11"
    schema = lance.dataset(runtime.namespace.describe_table(["s", "t"]).location).schema
    assert str(schema.field("day").type) == "date32[day]"  # the updated column keeps its type


def test_delete_keeps_rows_whose_condition_is_false_or_null(runtime: LancensRuntime) -> None:
    dml.execute(runtime, "DELETE FROM s.t WHERE id < 3 OR name = NULL")
    assert sorted(rows(runtime)) == list(range(3, 10))
    assert runtime.namespace.describe_table(["s", "t"]).version == 2


def test_update_and_delete_may_alias_the_table(runtime: LancensRuntime) -> None:
    dml.execute(runtime, "UPDATE s.t AS u SET u.name = concat(u.name, '!') WHERE u.id IN (1, 2)")
    dml.execute(runtime, "DELETE FROM s.t d WHERE d.id = 2")
    after = rows(runtime)
    assert (after[1][0], after[3][0], 2 in after) == ("n1!", "n3", False)
    assert runtime.namespace.describe_table(["s", "t"]).version == 3


def test_insert_appends_one_version(runtime: LancensRuntime) -> None:
    runtime.sql("INSERT INTO s.t (id, name, day) VALUES (100, 'hundred', DATE'2025-01-01')")
    assert rows(runtime)[100][0] == "hundred"
    assert runtime.namespace.describe_table(["s", "t"]).version == 2


def test_update_of_an_unknown_column_changes_nothing(runtime: LancensRuntime) -> None:
    with pytest.raises(ValueError, match="no such column"):
        dml.execute(runtime, "UPDATE s.t SET nope = 1")
    assert runtime.namespace.describe_table(["s", "t"]).version == 1


def test_a_column_assigned_twice_in_any_case_is_refused(runtime: LancensRuntime) -> None:
    with pytest.raises(ValueError, match=r"\['name'\] assigned more than once"):
        dml.execute(runtime, "UPDATE s.t SET name = 'a', NAME = 'b' WHERE id = 1")
    assert runtime.namespace.describe_table(["s", "t"]).version == 1


def test_only_update_and_delete_are_row_level() -> None:
    assert route.is_row_level("-- c\n/* d */ update s.t set a = 1")
    assert route.is_row_level("DELETE FROM s.t")
    assert not route.is_row_level("select * from updates")
