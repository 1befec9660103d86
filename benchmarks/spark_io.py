"""Spark writes and reads through the ``lance`` Python data source and the JVM connector vs Parquet.

    python benchmarks/spark_io.py --rows 100000 --repeat 1   # smoke
    python benchmarks/spark_io.py                            # 2,000,000 rows, --repeat 3

Two comparisons, each side by side and interleaved ``--repeat`` times (ratios of the medians):

- first use (goal <= 2.0): a fresh process starts a session and writes ``--rows`` rows once, to
  Lance or to Parquet. Lance's first write pays what Parquet's does not: the Python daemons and
  workers of the data source (cold interpreters importing pyspark, pyarrow and lance), its planner
  workers, the commit worker. Session start is timed apart and not in the ratio.
- warm (goals: write <= 1.3, read + aggregate <= 1.5): one session, a cached DataFrame, both paths
  warmed up on a small slice first, then the write and a read + aggregate of each format. After
  the timed steps both tables are checked to hold the same rows (untimed): the row count (which
  must also be ``--rows``), the sum, minimum and maximum of ``id``, the sum and maximum of
  ``bucket``, the count of ``even`` rows, the distinct ``customer`` values and their total length
  are compared exactly; the sum of the double column ``amount`` is compared with a relative
  tolerance of 1e-9 (``FLOAT_RELATIVE_TOLERANCE``), because Spark's partial aggregation adds the
  partitions' doubles in an order that depends on how each source splits the data, so the last
  bits of a float sum differ between formats while the rows are the same.

Both of Lance's paths are timed: ``lance`` writes through the Python data source and reads through
it; ``lance-jvm`` writes with the JVM writer (Spark tasks write the files with lance-core in Spark's
JVM, the driver commits them with pylance, as the adapter does: ``spark/jvm_writer.py``) and reads
its own table through the JVM connector (docs/jvm-connector.md). First use times the first write
and then the first read + aggregate of what was written, in the fresh process; its ratio is of
write + read.

The same 5-column frame (long, long, double, string, boolean) everywhere, through
``get_or_create_session`` (the adapter's session settings, plus the JVM connector's class path)
for every format.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import machine, ratio_line, run_measured, spread

FORMATS = ("lance", "lance-jvm", "parquet")
GOALS = {
    "first write": 2.0,
    "first write + read": 1.5,
    "write": 1.3,
    "read": 1.5,
    "write lance-jvm": 1.0,
    "read lance-jvm": 0.8,
}
# A float sum depends on the order Spark adds the rows and the partitions' partial sums, which
# differs between formats. Summing n positive doubles in any order is off by at most about
# n * 1.1e-16 of the sum: 2.2e-10 for the default 2,000,000 rows, under this tolerance. Lost or
# duplicated rows are caught by the exact integer aggregates; this catches a changed amount column.
FLOAT_RELATIVE_TOLERANCE = 1e-9


def session(master: str):  # -> SparkSession
    from dbt.adapters.lancens.spark import get_or_create_session, jvm_connector

    config = {"spark.ui.showConsoleProgress": "false", **jvm_connector.spark_settings()}
    return get_or_create_session(master=master, config=config)


def frame(spark, rows: int):  # -> DataFrame
    return spark.range(0, rows, 1, 2).selectExpr(
        "id",
        "id % 1000 AS bucket",
        "CAST(id AS DOUBLE) / 3 AS amount",
        "concat('customer-', CAST(id % 50000 AS STRING)) AS customer",
        "CAST(id % 2 = 0 AS BOOLEAN) AS even",
    )


def write(data, file_format: str, uri: str) -> None:
    if file_format == "lance":
        data.write.format("lance").mode("overwrite").save(uri)
    elif file_format == "lance-jvm":
        jvm_write(data, uri)
    else:
        data.write.mode("overwrite").parquet(uri)


def jvm_write(data, uri: str) -> None:
    """The adapter's JVM path: Spark tasks write the files with lance-core, the driver commits one
    Overwrite with pylance (a new version of the table when it exists)."""
    import lance

    from dbt.adapters.lancens.spark import jvm_writer
    from dbt.adapters.lancens.spark.types import lance_write_schema, spark_arrow_schema

    schema = lance_write_schema(spark_arrow_schema(data.schema), None, {}, append=False)
    try:
        read_version: int | None = lance.dataset(uri).version
    except (OSError, ValueError):
        read_version = None
    target = jvm_writer.JvmWrite(uri, schema, jvm_writer.NEW_TABLE_STORAGE_VERSION, overwrite=True)
    fragments = jvm_writer.write_fragments(data, target)
    lance.LanceDataset.commit(
        uri, lance.LanceOperation.Overwrite(schema, fragments), read_version=read_version
    )


def read(spark, file_format: str, uri: str):  # -> DataFrame
    if file_format == "lance":
        return spark.read.format("lance").load(uri)
    if file_format == "lance-jvm":
        return spark.read.format("lance_jvm").load(uri)
    return spark.read.parquet(uri)


def aggregate(frame_of: Callable[[], Any]) -> Callable[[], object]:
    """Read + aggregate of 3 of the 5 columns."""
    return lambda: frame_of().groupBy().agg({"amount": "sum", "bucket": "max", "id": "count"}).first()


def first_use_worker(file_format: str, rows: int, master: str, directory: Path) -> None:
    """In a fresh process: session start, the first write, then the first read + aggregate of it;
    prints the three times as JSON."""
    start = time.perf_counter()
    spark = session(master)
    started = time.perf_counter()
    uri = str(directory / f"first.{file_format}")
    write(frame(spark, rows), file_format, uri)
    written = time.perf_counter()
    aggregate(lambda: read(spark, file_format, uri))()
    done = time.perf_counter()
    print(json.dumps({"session_s": started - start, "write_s": written - started, "read_s": done - written}))


def first_use(rows: int, repeat: int, master: str) -> list[str]:
    print(
        f"\n== first use: a fresh process writes {rows} rows once, then reads them "
        "(session start not counted)",
        flush=True,
    )
    writes: dict[str, list[float]] = {name: [] for name in FORMATS}
    both: dict[str, list[float]] = {name: [] for name in FORMATS}
    with tempfile.TemporaryDirectory(prefix="spark-io-first-") as tmp:
        for attempt in range(repeat):
            order = FORMATS if attempt % 2 == 0 else tuple(reversed(FORMATS))
            for file_format in order:
                directory = Path(tmp) / f"{file_format}-{attempt}"
                directory.mkdir()
                command = [sys.executable, __file__, "--first-use", file_format, "--rows", str(rows),
                           "--master", master, "--dir", str(directory)]  # fmt: skip
                run = run_measured(command, directory)
                result = run.result()
                writes[file_format].append(result["write_s"])
                both[file_format].append(result["write_s"] + result["read_s"])
                print(
                    f"  repeat {attempt + 1} {file_format:<9} session {result['session_s']:6.2f}s  "
                    f"first write {result['write_s']:6.2f}s  first read {result['read_s']:6.2f}s  "
                    f"(process {run.wall:6.2f}s wall, {run.cpu:6.2f}s CPU)",
                    flush=True,
                )
    for file_format in FORMATS:
        print(
            f"  {file_format:<9} first write {spread(writes[file_format])}  "
            f"write + read {spread(both[file_format])}"
        )
    lines = [
        ratio_line(f"first write {name}/parquet", writes[name], writes["parquet"], GOALS["first write"])
        for name in ("lance", "lance-jvm")
    ]
    lines += [
        ratio_line(
            f"first write + read {name}/parquet", both[name], both["parquet"], GOALS["first write + read"]
        )
        for name in ("lance", "lance-jvm")
    ]
    print("\n".join("  " + line for line in lines))
    return lines


def timed(label: str, action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    elapsed = time.perf_counter() - start
    print(f"  {label:<15} {elapsed:8.2f}s", flush=True)
    return elapsed


def check_same_rows(readers: dict[str, Callable[[], Any]], rows: int) -> None:
    """Both tables hold the same ``rows`` rows: exact integer aggregates, float sums to a tolerance."""
    exact = (
        "count(*) AS rows_",
        "sum(id) AS id_sum",
        "min(id) AS id_min",
        "max(id) AS id_max",
        "sum(bucket) AS bucket_sum",
        "max(bucket) AS bucket_max",
        "count(DISTINCT customer) AS customers",
        "sum(CAST(even AS INT)) AS evens",
        "sum(length(customer)) AS customer_chars",
    )
    answers = {
        name: reader().selectExpr(*exact, "sum(amount) AS amount_sum").first().asDict()
        for name, reader in readers.items()
    }
    lance, parquet = answers["lance"], answers["parquet"]
    floats = {"amount_sum"}
    exact_parquet = {key: value for key, value in parquet.items() if key not in floats}
    for name in ("lance", "lance-jvm"):
        assert {key: value for key, value in answers[name].items() if key not in floats} == exact_parquet, (
            answers
        )
        for key in floats:
            assert math.isclose(answers[name][key], parquet[key], rel_tol=FLOAT_RELATIVE_TOLERANCE), answers
    assert lance["rows_"] == rows, answers
    print(
        f"  check: same {rows} rows (exact integer aggregates; amount sums {lance['amount_sum']!r} vs "
        f"{parquet['amount_sum']!r}, relative tolerance {FLOAT_RELATIVE_TOLERANCE:g})",
        flush=True,
    )


def warm(rows: int, repeat: int, master: str) -> list[str]:
    print(f"\n== warm: one session, {rows} cached rows, written and read back --repeat times", flush=True)
    spark = session(master)
    data = frame(spark, rows)
    data.cache().count()

    with tempfile.TemporaryDirectory(prefix="spark-io-warm-") as tmp:
        uris = {name: str(Path(tmp) / f"t.{name}") for name in FORMATS}
        readers = {name: (lambda name=name: read(spark, name, uris[name])) for name in FORMATS}
        for name in FORMATS:  # warm up: JVM code generation, Python workers
            write(data.limit(1000), name, uris[name])
        for name in FORMATS:
            aggregate(readers[name])()
        steps: dict[str, Callable[[], object]] = {}
        for name in FORMATS:
            steps[f"{name} write"] = lambda name=name: write(data, name, uris[name])
        for name in FORMATS:
            steps[f"{name} read"] = aggregate(readers[name])
        times: dict[str, list[float]] = {label: [] for label in steps}
        for _ in range(repeat):
            for label, step in steps.items():
                times[label].append(timed(label, step))
        check_same_rows(readers, rows)
    for label, values in times.items():
        print(f"  {label:<15} {spread(values)}")
    lines = [
        ratio_line(
            f"warm {step} lance/parquet", times[f"lance {step}"], times[f"parquet {step}"], GOALS[step]
        )
        for step in ("write", "read")
    ]
    lines += [
        ratio_line(
            f"warm {step} lance-jvm/parquet",
            times[f"lance-jvm {step}"],
            times[f"parquet {step}"],
            GOALS[f"{step} lance-jvm"],
        )
        for step in ("write", "read")
    ]
    print("\n".join("  " + line for line in lines))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["first", "warm"], help="run one of the two comparisons")
    parser.add_argument("--first-use", choices=FORMATS, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_use:
        first_use_worker(args.first_use, args.rows, args.master, args.dir)
        return
    print(machine(), flush=True)
    summary = []
    if args.only in (None, "first"):
        summary += first_use(args.rows, args.repeat, args.master)
    if args.only in (None, "warm"):
        summary += warm(args.rows, args.repeat, args.master)
    print(f"\nrows={args.rows} master={args.master} repeat={args.repeat}\n{machine()}")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
