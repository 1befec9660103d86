"""Lance through the ``lance`` Python data source vs Parquet through Spark's built-in writer.

The same DataFrame (``--rows``, default 5,000,000) is cached, written to both formats, then read
back with the same aggregate, ``--repeat`` times (default 3) with the four steps interleaved, so
load from other processes falls on both formats alike. Prints every time, the medians and the
ratios of the medians lance/parquet (targets: write <= 1.3, read <= 1.5).
Run: ``SPARK_LOCAL_IP=127.0.0.1 python benchmarks/spark_io.py --rows 100000``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dbt.adapters.lancens.spark import get_or_create_session


def timed(label: str, action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    elapsed = time.perf_counter() - start
    print(f"{label:<14} {elapsed:8.2f}s", flush=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spark = get_or_create_session(master=args.master, config={"spark.ui.showConsoleProgress": "false"})
    frame = spark.range(0, args.rows, 1, 2).selectExpr(
        "id",
        "id % 1000 AS bucket",
        "CAST(id AS DOUBLE) / 3 AS amount",
        "concat('customer-', CAST(id % 50000 AS STRING)) AS customer",
        "CAST(id % 2 = 0 AS BOOLEAN) AS even",
    )
    frame.cache().count()

    def aggregate(reader: Callable[[], object]) -> Callable[[], object]:
        return lambda: reader().groupBy().agg({"amount": "sum", "bucket": "max", "id": "count"}).first()

    with tempfile.TemporaryDirectory(prefix="spark-io-bench-") as tmp:
        lance_uri, parquet_uri = str(Path(tmp) / "t.lance"), str(Path(tmp) / "t.parquet")
        # warm up both paths (JVM code generation, Python workers) on a small slice
        frame.limit(1000).write.format("lance").mode("overwrite").save(lance_uri)
        frame.limit(1000).write.mode("overwrite").parquet(parquet_uri)

        steps: dict[str, Callable[[], object]] = {
            "lance write": lambda: frame.write.format("lance").mode("overwrite").save(lance_uri),
            "parquet write": lambda: frame.write.mode("overwrite").parquet(parquet_uri),
            "lance read": aggregate(lambda: spark.read.format("lance").load(lance_uri)),
            "parquet read": aggregate(lambda: spark.read.parquet(parquet_uri)),
        }
        times: dict[str, list[float]] = {label: [] for label in steps}
        for _ in range(args.repeat):
            for label, step in steps.items():
                times[label].append(timed(label, step))
        lance_rows = aggregate(lambda: spark.read.format("lance").load(lance_uri))()
        parquet_rows = aggregate(lambda: spark.read.parquet(parquet_uri))()
        assert lance_rows == parquet_rows, (lance_rows, parquet_rows)

    median = {label: statistics.median(values) for label, values in times.items()}
    print(
        f"rows={args.rows} master={args.master} repeat={args.repeat} medians: "
        + ", ".join(f"{label} {value:.2f}s" for label, value in median.items())
    )
    print(
        f"write ratio lance/parquet = {median['lance write'] / median['parquet write']:.2f} (target <= 1.3)"
    )
    print(f"read ratio lance/parquet  = {median['lance read'] / median['parquet read']:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
