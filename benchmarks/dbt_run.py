"""`dbt run` of the sample project at scale: dbt-lancens vs dbt-spark (session method, Parquet).

Both adapters get a copy of ``sample_project`` (models, seeds, macros) in a temp directory with
their own ``profiles.yml``, and the same raw data generated directly (``--rows`` order and payment
rows, a tenth as many customers) instead of loading CSV seeds: Lance tables written through the
engine (``DirectoryNamespace.create_table``) for lancens, Parquet tables registered in the Hive
metastore for dbt-spark. Then ``dbt run`` runs once per adapter, each in its own subprocess and
working directory (dbt-spark's session uses Hive support, whose Derby metastore lives in the cwd),
and the wall times and their ratio lancens/dbt-spark are printed (target <= 1.0).

The Python model ``customer_segments`` is replaced by the same logic in SQL in both projects:
dbt-spark runs Python models only on Databricks, and both adapters must do the same work. For
dbt-spark, incremental models asking for ``merge`` get ``append`` (it allows merge only on
Delta/Iceberg/Hudi); ``dbt run`` on an empty warehouse builds them as tables either way.

Run: ``SPARK_LOCAL_IP=127.0.0.1 python benchmarks/dbt_run.py --rows 10000`` (default 1,000,000).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SAMPLE = Path(__file__).resolve().parent.parent / "sample_project"
ADAPTERS = ("lancens", "spark")
RAW_SCHEMA = {"lancens": ["analytics", "raw"], "spark": ["analytics_raw"]}
STATUSES = ["placed", "shipped", "completed", "return_pending", "returned"]
METHODS = ["credit_card", "coupon", "bank_transfer", "gift_card"]

SEGMENTS_SQL = """\
select
    customer_id,
    lifetime_value,
    case when lifetime_value >= 40 then 'high'
         when lifetime_value > 0 then 'regular'
         else 'none' end as segment
from {{ ref('customers') }}
"""


def profile(adapter: str, master: str) -> str:
    """profiles.yml text: the same master, threads and loopback-only Spark for both adapters."""
    if adapter == "lancens":
        body = f"""      type: lancens
      root: ./warehouse
      schema: analytics
      master: "{master}"
      threads: 2"""
    else:
        body = f"""      type: spark
      method: session
      host: localhost
      schema: analytics
      threads: 2
      server_side_parameters:
        spark.master: "{master}"
        spark.driver.host: 127.0.0.1
        spark.driver.bindAddress: 127.0.0.1
        spark.ui.enabled: "false"
        spark.sql.session.timeZone: UTC"""
    return f"jaffle_lance:\n  target: bench\n  outputs:\n    bench:\n{body}\n"


def make_project(adapter: str, directory: Path, master: str) -> None:
    """A copy of the sample project for ``adapter`` (its models, seeds for ref(), its profile)."""
    directory.mkdir(parents=True)
    for part in ("models", "seeds", "macros"):
        shutil.copytree(SAMPLE / part, directory / part)
    (directory / "models" / "marts" / "customer_segments.py").unlink()
    (directory / "models" / "marts" / "customer_segments.sql").write_text(
        "{{ config(materialized='table') }}\n\n" + SEGMENTS_SQL
    )
    project = (SAMPLE / "dbt_project.yml").read_text()
    if adapter == "spark":  # dbt-spark's default would be a Hive text table
        project = project.replace(
            "models:\n  jaffle_lance:\n", "models:\n  jaffle_lance:\n    +file_format: parquet\n"
        )
        # dbt-spark refuses merge on Parquet (Delta/Iceberg/Hudi only); a first run is a plain
        # create either way, so the models do the same work with append
        for model in (directory / "models").rglob("*.sql"):
            sql = model.read_text()
            model.write_text(sql.replace("incremental_strategy='merge'", "incremental_strategy='append'"))
    (directory / "dbt_project.yml").write_text(project)
    (directory / "profiles.yml").write_text(profile(adapter, master))


def raw_tables(rows: int) -> dict[str, pa.Table]:
    """The three raw tables: ``rows`` orders and payments, ``rows // 10`` customers."""
    customers = max(rows // 10, 1)
    cid = pa.array(range(1, customers + 1), pa.int64())
    oid = pa.array(range(1, rows + 1), pa.int64())
    start = dt.date(2024, 1, 1)
    return {
        "raw_customers": pa.table(
            {
                "id": cid,
                "first_name": pc.binary_join_element_wise(
                    "first-", pc.cast(pc.bit_wise_and(cid, 1023), pa.string()), ""
                ),
                "last_name": pc.binary_join_element_wise(
                    "L", pc.cast(pc.bit_wise_and(cid, 31), pa.string()), ""
                ),
                "email": pc.binary_join_element_wise("c", pc.cast(cid, pa.string()), "@example.com", ""),
                "note": pa.array([None if i % 3 else f"note {i}" for i in range(customers)], pa.string()),
            }
        ),
        "raw_orders": pa.table(
            {
                "id": oid,
                "user_id": pa.array([(i * 7919) % customers + 1 for i in range(rows)], pa.int64()),
                "order_date": pa.array(
                    [start + dt.timedelta(days=i % 730) for i in range(rows)], pa.date32()
                ),
                "status": pa.array([STATUSES[i % len(STATUSES)] for i in range(rows)], pa.string()),
            }
        ),
        "raw_payments": pa.table(
            {
                "id": oid,
                "order_id": oid,
                "payment_method": pa.array([METHODS[i % len(METHODS)] for i in range(rows)], pa.string()),
                "amount": pa.array([(i * 37) % 5000 for i in range(rows)], pa.int64()),
            }
        ),
    }


def generate(adapter: str, directory: Path, rows: int, master: str) -> None:
    """Write the raw tables where each adapter's ``ref('raw_*')`` resolves (runs in ``directory``)."""
    tables = raw_tables(rows)
    if adapter == "lancens":
        from dbt.adapters.lancens.namespace import DirectoryNamespace

        namespace = DirectoryNamespace(str(directory / "warehouse"))
        raw = RAW_SCHEMA["lancens"]
        for depth in range(1, len(raw) + 1):
            namespace.create_namespace(raw[:depth])
        for name, table in tables.items():
            namespace.create_table([*raw, name], table)
        return
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .enableHiveSupport()
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    database = RAW_SCHEMA["spark"][0]
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for name, table in tables.items():
        location = directory / "raw" / name
        location.mkdir(parents=True)
        pq.write_table(table, location / "part-0.parquet")
        spark.sql(f"CREATE TABLE {database}.{name} USING parquet LOCATION '{location}'")
    spark.stop()


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


def run(command: list[str], cwd: Path) -> float:
    """Wall time of ``command`` in ``cwd``; exits with its output when it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=child_env(), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {cwd}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--generate", choices=ADAPTERS, help=argparse.SUPPRESS)
    parser.add_argument("--project", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(args.generate, args.project, args.rows, args.master)
        return

    dbt = str(Path(sys.executable).with_name("dbt"))
    with tempfile.TemporaryDirectory(prefix="dbt-run-bench-") as tmp:
        times: dict[str, float] = {}
        for adapter in ADAPTERS:
            project = Path(tmp) / adapter
            make_project(adapter, project, args.master)
            generated = run(
                [
                    sys.executable,
                    __file__,
                    "--generate",
                    adapter,
                    "--project",
                    str(project),
                    "--rows",
                    str(args.rows),
                    "--master",
                    args.master,
                ],
                project,
            )
            times[adapter] = run([dbt, "run", "--project-dir", ".", "--profiles-dir", "."], project)
            print(f"{adapter:<8} raw data {generated:7.2f}s   dbt run {times[adapter]:7.2f}s", flush=True)
    print(f"rows={args.rows} master={args.master}")
    print(f"dbt run ratio lancens/dbt-spark = {times['lancens'] / times['spark']:.2f} (target <= 1.0)")


if __name__ == "__main__":
    main()
