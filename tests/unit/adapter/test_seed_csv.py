"""Seed CSV parsing without dbt: delimiter and column-name checks fail before anything is written."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.materializations.seeds import read_seed_csv


def _csv(tmp_path: Path, text: str) -> str:
    path = tmp_path / "seed.csv"
    path.write_text(text)
    return str(path)


def test_delimiter_must_be_one_character(spark, tmp_path: Path) -> None:
    path = _csv(tmp_path, "a,b\n1,2\n")
    for delimiter in ("", ";;"):
        with pytest.raises(CompilationError, match="exactly one character"):
            read_seed_csv(spark, path, delimiter=delimiter)


def test_unquoted_names_must_be_identifiers(spark, tmp_path: Path) -> None:
    path = _csv(tmp_path, "id|name\n1|a\n")  # read with the wrong delimiter: one column `id|name`
    with pytest.raises(ValueError, match=r"Syntax error in seed .*\['id\|name'\]"):
        read_seed_csv(spark, path, delimiter=",", quote_columns=False)
    # quoted (or unset) column names are stored as written
    assert read_seed_csv(spark, path, delimiter=",", quote_columns=True).column_names == ["id|name"]
    assert read_seed_csv(spark, path, delimiter="|", quote_columns=False).to_pylist() == [
        {"id": 1, "name": "a"}
    ]


def test_array_cells_are_json(spark, tmp_path: Path) -> None:
    path = _csv(tmp_path, 'id,vector\n1,"[1.5, 2]"\n2,\n3,not json\n')
    with pytest.raises(ValueError, match=r"column 'vector' has a value that is not JSON"):
        read_seed_csv(spark, path, column_types={"vector": "array<float>"})


def test_timestamps_with_and_without_offsets(spark, tmp_path: Path) -> None:
    naive = _csv(tmp_path, "at\n2024-01-02 03:04:05\n")
    table = read_seed_csv(spark, naive, column_types={"at": "timestamp"})
    assert str(table.column("at")[0]) == "2024-01-02 03:04:05+00:00"
    zoned = tmp_path / "zoned.csv"
    zoned.write_text("at\n2024-01-02T03:04:05+02:00\n")
    table = read_seed_csv(spark, str(zoned), column_types={"at": "timestamp"})
    assert str(table.column("at")[0]) == "2024-01-02 01:04:05+00:00"


@pytest.mark.parametrize("zone", ["America/New_York", "+05:30", "UTC"])
def test_zone_less_timestamps_are_read_in_the_session_time_zone_as_spark_casts_them(
    spark, tmp_path: Path, zone: str
) -> None:
    """Declared and inferred timestamp columns give the instants Spark's CAST gives for the same text
    in the session time zone (dbt-spark's seed INSERT has Spark read them), the clocks' changes
    included: 02:30 on 2024-03-10 does not exist in New York, 01:30 on 2024-11-03 happens twice.
    They used to be read as UTC whatever the session's zone."""
    texts = ["2024-01-02 03:04:05", "2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-07-01 23:59:59"]
    path = _csv(tmp_path, "declared,inferred\n" + "".join(f"{t},{t}\n" for t in texts))
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        table = read_seed_csv(spark, path, column_types={"declared": "timestamp"})
        literals = ", ".join(f"cast('{t}' as timestamp)" for t in texts)
        # unix_micros: the instant itself, free of how Python or Arrow would print it
        spark_micros = spark.sql(f"select unix_micros(t) from (select explode(array({literals})) as t)")
        expected = [row[0] for row in spark_micros.collect()]
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    for name in ("declared", "inferred"):
        assert table.schema.field(name).type == pa.timestamp("us", tz="UTC")
        assert table.column(name).cast(pa.int64()).to_pylist() == expected, name
    if zone == "America/New_York":
        assert str(table.column("declared")[0]) == "2024-01-02 08:04:05+00:00"


def test_a_session_time_zone_only_java_knows_is_named(spark, tmp_path: Path) -> None:
    """Spark takes Java's short zone ids (`PST`); Python's zone database has no such zone, so the
    seed fails naming the setting rather than reading the text in a guessed zone."""
    path = _csv(tmp_path, "at\n2024-01-02 03:04:05\n")
    spark.conf.set("spark.sql.session.timeZone", "PST")
    try:
        with pytest.raises(ValueError, match="spark.sql.session.timeZone 'PST'"):
            read_seed_csv(spark, path)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_nulls_and_text_as_dbt_core_loads_them(spark, tmp_path: Path) -> None:
    """The same values dbt-core's own seed loader (agate, used by dbt-spark) gives: `null` in any of
    its usual spellings and empty fields, quoted or not, are NULL in every column, declared ones
    included; times of day stay text. The file used to give 'null' strings and a string `amount`."""
    from dbt_common.clients.agate_helper import from_csv

    text = (
        "id,amount,name,label,at\n"
        "1,10,a,x,10:00:00\n"
        '2,null,null,"",11:30:00\n'
        '3,NULL,"",Null,\n'
        '4,Null,b,"null",\n'
    )
    path = _csv(tmp_path, text)
    table = read_seed_csv(spark, path, column_types={"label": "string"})
    assert table.schema.field("amount").type == "int64"
    assert table.schema.field("at").type == "string"
    expected = from_csv(path, text_columns=["label"])  # dbt-core's parse of the same file
    assert [[row[name] for name in table.column_names] for row in table.to_pylist()] == [
        [int(v) if isinstance(v, Decimal) else v for v in row.values()] for row in expected.rows
    ]
    assert table.column("name").to_pylist() == ["a", None, None, "b"]
    assert table.column("label").to_pylist() == ["x", None, None, None]


def test_a_header_lance_cannot_read_fails_before_writing(spark, tmp_path: Path) -> None:
    from dbt.adapters.lancens.commits.writes import write_arrow

    table = read_seed_csv(spark, _csv(tmp_path, "id,a`b\n1,2\n"))
    with pytest.raises(ValueError, match=r"column 'a`b': a Lance table cannot hold"):
        write_arrow(None, ["s", "t"], table, {})  # type: ignore[arg-type]  # refused before any use


def test_a_declared_time_column_keeps_its_type(spark, tmp_path: Path) -> None:
    table = read_seed_csv(spark, _csv(tmp_path, "id,t\n1,10:00:00\n2,\n"), column_types={"t": "time"})
    assert pa.types.is_time(table.schema.field("t").type)
    assert [str(value) for value in table.column("t").to_pylist()] == ["10:00:00", "None"]
