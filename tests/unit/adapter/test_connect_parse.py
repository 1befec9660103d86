"""The Spark Connect statement reader reads what Spark's own parser reads.

Spark's parser (`runtime.jvm.parse_statement`, the local session's) is the reference: every statement
shape the adapter applies itself must come out of the Connect reader as the same plan. Column types
go through Spark's DDL parser on both sides (here the local JVM's, on a Connect client the server's).
"""

from __future__ import annotations

import dataclasses

import pytest
from pyspark.sql import types as T

from dbt.adapters.lancens.runtime import connect_parse, jvm, plans

CHAR_MARK = "__CHAR_VARCHAR_TYPE_STRING"
SAME_AS_SPARK = [
    "drop table if exists analytics.t",
    "DROP VIEW `analytics`.`v`",
    "drop schema if exists analytics cascade",
    "drop database analytics",
    "drop table t",  # a temporary view's one-part name: Spark's business
    "drop table cat.analytics.t",
    "create table analytics.t (id bigint, name varchar(10), tags array<string>, m map<string, int>) using x",
    "create table if not exists analytics.t (id int comment 'the id, unique')",
    "create table analytics.t (id int) using parquet",
    "create or replace table analytics.t using lance as select 1 as id, 'a, b' as s",
    "replace table analytics.t using lance as select 1 as id",
    "create table `analytics`.`t` as select id from range(3) where id > 1",
    "/* dbt */ create or replace table analytics.t using lance tblproperties ('k' = 'v') as select 1 as id",
    "alter table analytics.t add columns (a int, b string comment 'x, y', c struct<p: int, q: string>)",
    "alter table analytics.t add columns (a int default null)",
    "alter table analytics.t add column c decimal(10, 2)",
    "alter table analytics.t drop columns (a, `b`)",
    "alter table analytics.t drop column if exists a",
    "alter table analytics.t alter column a type bigint",
    "alter table analytics.t alter column a type varchar(20)",
    "truncate table analytics.t",
    "alter table analytics.t rename to analytics.u",
    "ALTER TABLE `analytics`.`t` RENAME TO u",
    "alter view analytics.v rename to other.w",
    "alter table t rename to u",  # a temporary view: Spark's
    "alter table analytics.t set tblproperties ('k' = 'v')",
    "alter table analytics.t unset tblproperties ('k')",
    "alter table analytics.t rename column a to b",
    "alter table analytics.t replace columns (a int)",
    "alter table analytics.t set location '/x'",
    "alter table analytics.t partition (p = 1) set location '/x'",
    "comment on table analytics.t is 'c'",
    "alter view analytics.v as select 2",
    "alter view analytics.v set tblproperties ('k' = 'v')",
    "select 1",
    "insert into analytics.t select 1",
    "create view analytics.v as select 1",
]


def without_char_varchar_marks(statement: plans.Statement | None) -> plans.Statement | None:
    """Spark's plan marks a VARCHAR(n) column it made a string with its original type (field
    metadata, which no Lance schema carries); the plans are compared without that mark."""
    if not isinstance(statement, plans.CreateTable):
        return statement
    fields = [
        T.StructField(f.name, f.dataType, f.nullable, {k: v for k, v in f.metadata.items() if k != CHAR_MARK})
        for f in statement.schema.fields
    ]
    return dataclasses.replace(statement, schema=T.StructType(fields))


@pytest.mark.parametrize("statement", SAME_AS_SPARK)
def test_the_connect_reader_reads_what_spark_reads(spark, statement: str) -> None:
    expected = without_char_varchar_marks(jvm.parse_statement(spark, statement))
    assert connect_parse.parse_statement(statement, T._parse_datatype_string) == expected


@pytest.mark.parametrize(
    ("statement", "name", "assignments", "condition", "alias"),
    [
        (
            "-- a hook\nupdate analytics.t set a = a + 1, b = concat(b, ',') where id in (1, 2)",
            ["analytics", "t"],
            [("a", "a + 1"), ("b", "concat(b, ',')")],
            "id in (1, 2)",
            None,
        ),
        (
            "UPDATE analytics.t AS x SET x.a = 0 WHERE x.id = 1",
            ["analytics", "t"],
            [("a", "0")],
            "x.id = 1",
            "x",
        ),
        ("update analytics.t y set a = 0", ["analytics", "t"], [("a", "0")], "true", "y"),
        ("delete from analytics.t as d where d.id = 1", ["analytics", "t"], [], "d.id = 1", "d"),
        (
            "delete from `analytics`.`t` where id = 1 and s = 'where'",
            ["analytics", "t"],
            [],
            "id = 1 and s = 'where'",
            None,
        ),
        ("delete from analytics.t", ["analytics", "t"], [], "true", None),
    ],
)
def test_update_and_delete_keep_their_expressions_as_written(
    spark,
    statement: str,
    name: list[str],
    assignments: list[tuple[str, str]],
    condition: str,
    alias: str | None,
) -> None:
    read = connect_parse.parse_statement(statement, T._parse_datatype_string)
    assert read == plans.RowLevel(name, assignments, condition, alias)
    spark_read = jvm.parse_statement(spark, statement)
    assert isinstance(spark_read, plans.RowLevel)
    assert (spark_read.name, spark_read.alias) == (read.name, read.alias)
    assert [column for column, _ in spark_read.assignments] == [column for column, _ in assignments]


def test_a_bad_column_type_fails_with_sparks_own_error(spark) -> None:
    with pytest.raises(Exception, match="nosuchtype"):
        connect_parse.parse_statement("create table analytics.t (id nosuchtype)", T._parse_datatype_string)
