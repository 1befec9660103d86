"""Queries that scan one Lance table more than once return what the same query returns over Parquet.

PySpark 4.3 hands one planned reader to every scan of a relation (test_upstream_shared_reader.py), so
each query shape below runs over a Lance table and over a Parquet copy of the same rows, through
plain `spark.sql`, through `pushdown.sql_with_pushdown` (the adapter's path, which pushes filters
into Lance where a relation is scanned once), and through the DataFrame API; the answers must match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession

from dbt.adapters.lancens.spark.datasource import register_bound_source
from dbt.adapters.lancens.spark.pushdown import sql_with_pushdown

LANCE_DB = "shared_scans_lance"
PARQUET_DB = "shared_scans_parquet"
CATEGORIES = ["a", "b", "c"]


def _rows(start: int, stop: int) -> pa.Table:
    ids = list(range(start, stop))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "amount": pa.array([(i * 37) % 100 for i in ids], pa.int64()),
            "category": pa.array([CATEGORIES[i % 3] for i in ids]),
            "name": pa.array([f"n{i}" if i % 4 else None for i in ids]),
        }
    )


@dataclass(frozen=True)
class Tables:
    """The same rows as Lance (catalog tables and a path) and as Parquet (catalog tables)."""

    lance_uri: str

    def name(self, engine: str, table: str = "t") -> str:
        return f"{LANCE_DB if engine == 'lance' else PARQUET_DB}.{table}"


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    """`t`: 40 rows in 4 fragments (version 2); `t_v1`: its version 1 (30 rows); views over `t`."""
    root = tmp_path_factory.mktemp("shared_scans")
    uri = str(root / "t.lance")
    lance.write_dataset(_rows(0, 30), uri, max_rows_per_file=10)
    lance.write_dataset(_rows(30, 40), uri, mode="append", max_rows_per_file=10)
    for database in (LANCE_DB, PARQUET_DB):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    spark.sql(f"CREATE TABLE {LANCE_DB}.t USING {register_bound_source(spark, {'path': uri})}")
    versioned = register_bound_source(spark, {"path": uri, "version": "1"})
    spark.sql(f"CREATE TABLE {LANCE_DB}.t_v1 USING {versioned}")
    for name, data in (("t", _rows(0, 40)), ("t_v1", _rows(0, 30))):
        location = root / f"{name}.parquet"
        location.mkdir()
        pq.write_table(data, location / "part-0.parquet")
        spark.sql(f"CREATE TABLE {PARQUET_DB}.{name} USING parquet LOCATION '{location}'")
    for database in (LANCE_DB, PARQUET_DB):
        spark.sql(f"CREATE VIEW {database}.big AS SELECT * FROM {database}.t WHERE amount > 50")
    return Tables(lance_uri=uri)


SQL_SHAPES = {
    "union of a filtered and an unfiltered read": (
        "SELECT id FROM {t} WHERE amount > 50 UNION ALL SELECT id FROM {t}"
    ),
    "union of two different filters": (
        "SELECT id FROM {t} WHERE amount > 50 UNION ALL SELECT id FROM {t} WHERE category = 'b'"
    ),
    "self-join filtered on one side": (
        "SELECT a.id, b.id AS other FROM {t} a JOIN {t} b ON a.category = b.category WHERE a.amount > 80"
    ),
    "CTE read twice with different filters": (
        "WITH base AS (SELECT * FROM {t}) "
        "SELECT id FROM base WHERE amount > 50 UNION ALL SELECT id FROM base WHERE name IS NULL"
    ),
    "CTE read filtered and unfiltered": (
        "WITH base AS (SELECT * FROM {t}) "
        "SELECT count(*) AS n FROM base WHERE amount > 50 UNION ALL SELECT count(*) FROM base"
    ),
    "CTE over a CTE": (
        "WITH a AS (SELECT * FROM {t}), b AS (SELECT * FROM a WHERE amount > 10) "
        "SELECT id FROM b WHERE amount > 60 UNION ALL SELECT id FROM b"
    ),
    "IN subquery on the same table": (
        "SELECT id FROM {t} WHERE amount < 40 OR id IN (SELECT id FROM {t} WHERE category = 'a')"
    ),
    "NOT IN subquery on the same table": (
        "SELECT id FROM {t} WHERE id NOT IN (SELECT id FROM {t} WHERE amount > 50)"
    ),
    "scalar subquery on the same table": (
        "SELECT id FROM {t} WHERE amount > (SELECT avg(amount) FROM {t} WHERE category = 'c')"
    ),
    "correlated EXISTS on the same table": (
        "SELECT o.id FROM {t} o WHERE EXISTS (SELECT 1 FROM {t} i WHERE i.id = o.id + 1 AND i.amount > 50)"
    ),
    "different projections of one table": (
        "SELECT id, amount FROM {t} WHERE amount > 50 UNION ALL SELECT id, id AS amount FROM {t}"
    ),
    "two versions of one table": (
        "SELECT id FROM {t_v1} WHERE amount > 50 UNION ALL SELECT id FROM {t} WHERE category = 'a'"
    ),
    "a view over the table and the table": "SELECT id FROM {big} UNION ALL SELECT id FROM {t}",
    "one filtered read": "SELECT id, name FROM {t} WHERE amount > 50 AND name LIKE 'n1%'",
    "one read, two tables of one location": (
        "SELECT a.id FROM {t} a JOIN {t_v1} b ON a.id = b.id WHERE a.amount > 50 AND b.category = 'a'"
    ),
    # Read once, so the adapter's path reads only the columns the plan uses (the rest come back as
    # nulls that nothing may read): every way a query can use a column.
    "some columns of one read": "SELECT id, category FROM {t} WHERE amount > 20",
    "count of one read": "SELECT count(*) AS n FROM {t}",
    "grouped aggregate": "SELECT category, sum(amount) AS s, count(name) AS c FROM {t} GROUP BY category",
    "order by a column not returned": "SELECT name FROM {t} ORDER BY amount, id",
    "window over columns not returned": (
        "SELECT id, rank() OVER (PARTITION BY category ORDER BY amount, id) AS r FROM {t}"
    ),
    "distinct over an expression": "SELECT DISTINCT category, amount > 50 AS big FROM {t}",
    "every column of one read": "SELECT * FROM {t} WHERE id > 30",
    "except between two relations": (
        "SELECT category, amount FROM {t} EXCEPT SELECT category, amount FROM {t_v1}"
    ),
    "intersect of whole rows": "SELECT * FROM {t} INTERSECT SELECT * FROM {t_v1}",
    "union of different columns of two relations": (
        "SELECT id, name FROM {t} UNION ALL SELECT amount, category FROM {t_v1}"
    ),
    "CTE read once": "WITH c AS (SELECT id, amount, name FROM {t}) SELECT id, name FROM c WHERE amount > 30",
    "subquery in FROM": (
        "SELECT x.c, count(*) AS n FROM (SELECT category AS c, amount FROM {t}) x "
        "WHERE x.amount > 10 GROUP BY x.c"
    ),
    "scalar subquery over the other relation": (
        "SELECT id FROM {t} WHERE amount > (SELECT avg(amount) FROM {t_v1})"
    ),
    "left join of two relations": "SELECT a.id, b.name FROM {t} a LEFT JOIN {t_v1} b ON a.id = b.id + 5",
    "expressions over columns": ("SELECT upper(name) AS u, amount * 2 AS d FROM {t} WHERE category <> 'a'"),
    "having on a column not returned": ("SELECT category FROM {t} GROUP BY category HAVING max(amount) > 90"),
    "rollup": (
        "SELECT category, name IS NULL AS anon, count(*) AS n FROM {t} "
        "GROUP BY ROLLUP(category, name IS NULL)"
    ),
    "exists against the other relation": (
        "SELECT o.name FROM {t} o WHERE EXISTS (SELECT 1 FROM {t_v1} i WHERE i.id = o.id AND i.amount > 50)"
    ),
    "a view read once": "SELECT category, count(*) AS n FROM {big} GROUP BY category",
}


def _sorted(frame: DataFrame) -> list[tuple]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


def _sql(shape: str, tables: Tables, engine: str) -> str:
    return SQL_SHAPES[shape].format(
        t=tables.name(engine), t_v1=tables.name(engine, "t_v1"), big=tables.name(engine, "big")
    )


@pytest.mark.parametrize("shape", sorted(SQL_SHAPES))
def test_spark_sql_matches_parquet(spark: SparkSession, tables: Tables, shape: str) -> None:
    expected = _sorted(spark.sql(_sql(shape, tables, "parquet")))
    assert expected, "every shape returns rows, so a lost scan cannot look like a match"
    assert _sorted(spark.sql(_sql(shape, tables, "lance"))) == expected


@pytest.mark.parametrize("shape", sorted(SQL_SHAPES))
def test_adapter_path_matches_parquet(spark: SparkSession, tables: Tables, shape: str) -> None:
    expected = _sorted(spark.sql(_sql(shape, tables, "parquet")))
    assert _sorted(sql_with_pushdown(spark, _sql(shape, tables, "lance"))) == expected


def _scan_output_rows(frame: DataFrame) -> list[int]:
    """Rows each Lance scan of an executed frame produced (Spark's numOutputRows of the scan)."""
    counts = []
    pending = [frame._jdf.queryExecution().executedPlan()]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName() == "BatchScanExec":
            counts.append(int(node.metrics().get("numOutputRows").get().value()))
        iterator = node.children().iterator()
        while iterator.hasNext():
            pending.append(iterator.next())
    return counts


def test_a_single_filtered_read_skips_rows_in_lance(spark: SparkSession, tables: Tables) -> None:
    query = _sql("one filtered read", tables, "lance")
    pushed = sql_with_pushdown(spark, query)
    rows = pushed.collect()
    assert sorted(row.id for row in rows) == sorted(
        i for i in range(40) if (i * 37) % 100 > 50 and i % 4 and str(i).startswith("1")
    )
    assert _scan_output_rows(pushed) == [len(rows)]  # Lance returned only the matching rows
    plain = spark.sql(query)
    plain.collect()
    assert _scan_output_rows(plain) == [40]  # plain SQL keeps pushdown off: every row is read


def test_relations_read_twice_keep_pushdown_off(spark: SparkSession, tables: Tables) -> None:
    frame = sql_with_pushdown(spark, _sql("union of a filtered and an unfiltered read", tables, "lance"))
    frame.collect()
    assert _scan_output_rows(frame) == [40, 40]


def test_only_the_relation_read_once_gets_pushdown(spark: SparkSession, tables: Tables) -> None:
    query = (
        f"SELECT id FROM {tables.name('lance')} WHERE amount > 50 UNION ALL "
        f"SELECT id FROM {tables.name('lance', 't_v1')} WHERE amount > 50 UNION ALL "
        f"SELECT id FROM {tables.name('lance', 't_v1')}"
    )
    frame = sql_with_pushdown(spark, query)
    rows = frame.collect()
    above_50 = sum(1 for i in range(40) if (i * 37) % 100 > 50)
    above_50_v1 = sum(1 for i in range(30) if (i * 37) % 100 > 50)
    assert len(rows) == above_50 + above_50_v1 + 30
    assert sorted(_scan_output_rows(frame)) == sorted([above_50, 30, 30])


def _read_columns(frame: DataFrame) -> list[str | None]:
    """The read_columns option of every relation of a frame's analysed plan."""
    found = []
    pending = [frame._jdf.queryExecution().analyzed()]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName() == "DataSourceV2Relation":
            value = node.options().getOrDefault("read_columns", None)
            found.append(None if value is None else str(value))
        for children in (node.children(), node.innerChildren()):
            iterator = children.iterator()
            while iterator.hasNext():
                pending.append(iterator.next())
    return found


@pytest.mark.parametrize(
    ("shape", "read_columns"),
    [
        ("some columns of one read", ["0,1,2"]),  # id, amount (the filter), category; not name
        ("count of one read", ["0"]),  # one column, for the rows
        ("order by a column not returned", ["0,1,3"]),
        ("every column of one read", [None]),
        ("CTE read once", ["0,1,3"]),
        ("intersect of whole rows", [None, None]),
        ("union of different columns of two relations", ["0,3", "1,2"]),
    ],
)
def test_a_relation_read_once_reads_only_the_columns_its_plan_uses(
    spark: SparkSession, tables: Tables, shape: str, read_columns: list[str | None]
) -> None:
    frame = sql_with_pushdown(spark, _sql(shape, tables, "lance"))
    assert sorted(_read_columns(frame), key=repr) == sorted(read_columns, key=repr)
    assert _sorted(frame) == _sorted(spark.sql(_sql(shape, tables, "parquet")))


def test_columns_spark_declares_not_null_are_read_even_when_unused(
    spark: SparkSession, tables: Tables, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A null in a column Spark holds non-nullable fails the task (a null string there is a
    NullPointerException in Spark's row writer), used or not: such columns are always read."""
    uri = str(tmp_path_factory.mktemp("not_null") / "t.lance")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("label", pa.string(), nullable=False),
            pa.field("note", pa.string()),
        ]
    )
    lance.write_dataset(
        pa.table({"id": [1, 2, 3], "label": ["x", "y", "z"], "note": ["a", None, "c"]}, schema), uri
    )
    spark.sql(f"CREATE TABLE {LANCE_DB}.not_null USING {register_bound_source(spark, {'path': uri})}")
    assert [field.nullable for field in spark.table(f"{LANCE_DB}.not_null").schema] == [False, False, True]

    frame = sql_with_pushdown(spark, f"SELECT id FROM {LANCE_DB}.not_null WHERE id > 1")
    assert _read_columns(frame) == ["0"]
    assert _sorted(frame) == [(2,), (3,)]


def test_a_column_name_holding_an_expression_id_keeps_the_positions_right(
    spark: SparkSession, tables: Tables, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Spark prints a column as name#id; a name holding "#<digits>" makes the printed list ambiguous,
    so the proof asks each column for its id instead, and prunes by the right positions."""
    uri = str(tmp_path_factory.mktemp("hash_names") / "t.lance")
    lance.write_dataset(pa.table({"a#5": [1, 2, 3], "id": [10, 20, 30], "note": ["x", "y", "z"]}), uri)
    spark.sql(f"CREATE TABLE {LANCE_DB}.hash_names USING {register_bound_source(spark, {'path': uri})}")

    frame = sql_with_pushdown(spark, f"SELECT id, `a#5` FROM {LANCE_DB}.hash_names WHERE id > 10")
    assert _read_columns(frame) == ["0,1"]
    assert _sorted(frame) == [(20, 2), (30, 3)]


def test_the_reader_returns_unread_columns_as_nulls_and_names_bad_positions(
    spark: SparkSession, tables: Tables
) -> None:
    reader = spark.read.format("lance").option("filter_pushdown", "true")
    rows = reader.option("read_columns", "2,0").load(tables.lance_uri).collect()
    assert sorted((row.id, row.amount, row.category, row.name) for row in rows) == [
        (i, None, CATEGORIES[i % 3], None) for i in range(40)
    ]
    # Without the proof that the scan is its relation's only one, every column is read.
    unproven = spark.read.format("lance").option("read_columns", "0").load(tables.lance_uri).collect()
    assert all(row.amount is not None for row in unproven)
    with pytest.raises(Exception, match="read_columns"):
        reader.option("read_columns", "0,9").load(tables.lance_uri).collect()
    with pytest.raises(Exception, match="read_columns"):
        reader.option("read_columns", "id").load(tables.lance_uri).collect()


def test_commands_run_once_and_are_not_rewritten(spark: SparkSession, tables: Tables) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS shared_scans_commands")
    sql_with_pushdown(
        spark,
        f"CREATE OR REPLACE VIEW shared_scans_commands.v AS SELECT id FROM {tables.name('lance')} "
        "WHERE amount > 50",
    )
    view_sql = spark.sql("SHOW CREATE TABLE shared_scans_commands.v").first()[0]
    assert "filter_pushdown" not in view_sql
    assert spark.table("shared_scans_commands.v").count() == sum(1 for i in range(40) if (i * 37) % 100 > 50)


FrameShape = Callable[[Callable[[], DataFrame]], list[DataFrame]]

FRAME_SHAPES: dict[str, FrameShape] = {
    "one frame filtered and unfiltered in one query": lambda read: [
        (lambda df: df.where("amount > 50").select("id").union(df.select("id")))(read())
    ],
    "one frame self-joined, filtered on one side": lambda read: [
        (
            lambda df: (
                df.alias("a")
                .where("a.amount > 80")
                .join(df.alias("b"), "category")
                .selectExpr("a.id", "b.id AS other")
            )
        )(read())
    ],
    "two reads of the table": lambda read: [
        read().where("amount > 50").select("id").union(read().select("id"))
    ],
}


def _frames(shape: str, read: Callable[[], DataFrame]) -> list[list[tuple]]:
    return [_sorted(frame) for frame in FRAME_SHAPES[shape](read)]


@pytest.mark.parametrize("shape", sorted(FRAME_SHAPES))
@pytest.mark.parametrize("reader", ["catalog table", "path"])
def test_dataframes_match_parquet(spark: SparkSession, tables: Tables, shape: str, reader: str) -> None:
    expected = _frames(shape, lambda: spark.table(tables.name("parquet")))
    if reader == "catalog table":
        actual = _frames(shape, lambda: spark.table(tables.name("lance")))
    else:
        actual = _frames(shape, lambda: spark.read.format("lance").load(tables.lance_uri))
    assert actual == expected


@pytest.mark.parametrize("reader", ["catalog table", "path"])
def test_a_frame_reused_by_a_later_query(spark: SparkSession, tables: Tables, reader: str) -> None:
    """The planned reader outlives the query: a frame filtered in one query, then counted whole."""
    if reader == "catalog table":
        frame = spark.table(tables.name("lance"))
    else:
        frame = spark.read.format("lance").load(tables.lance_uri)
    assert frame.where("amount > 50").count() == sum(1 for i in range(40) if (i * 37) % 100 > 50)
    assert frame.count() == 40
    assert frame.where("category = 'a'").count() == 14
    assert frame.select("id").distinct().count() == 40


def test_two_versions_through_the_dataframe_api(spark: SparkSession, tables: Tables) -> None:
    old = spark.read.format("lance").option("version", "1").load(tables.lance_uri)
    new = spark.read.format("lance").load(tables.lance_uri)
    union = old.where("amount > 50").select("id").union(new.select("id"))
    expected = spark.table(tables.name("parquet", "t_v1")).where("amount > 50").select("id")
    expected = expected.union(spark.table(tables.name("parquet")).select("id"))
    assert _sorted(union) == _sorted(expected)


def test_the_parquet_copies_hold_the_same_rows(spark: SparkSession, tables: Tables) -> None:
    lance_rows = _sorted(spark.read.format("lance").load(tables.lance_uri))
    assert lance_rows == _sorted(spark.table(tables.name("parquet")))
    assert len(lance_rows) == 40
