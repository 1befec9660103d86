"""`dbt docs generate` catalog time: dbt-lancens (engine reads) vs dbt-spark `method: session` on parquet.

    python benchmarks/docs_catalog.py                    # 1000 lancens tables in 10 namespaces, 200 parquet
    python benchmarks/docs_catalog.py --tables 20 --spark-tables 10   # smoke run

Each side runs in its own subprocess with its own working directory (dbt-spark's session method
starts a Hive-enabled Spark whose Derby metastore lands in the cwd). The tables are made directly
(lancens: the namespace engine; parquet: pyarrow files registered with CREATE TABLE ... LOCATION),
then a temp dbt project declares every table as a source and runs `dbt docs generate` twice in
process: the first run includes starting Spark, the second is timed for the catalog step alone
(dbt's "Building catalog" event to catalog.json written). Reported: seconds, and the ratio of the
lancens catalog to the dbt-spark one at the same table count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from worker_result import worker_result

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def sample_table(rows: int, columns: int):  # -> pa.Table
    import pyarrow as pa

    data = {"id": pa.array(range(rows), pa.int64())}
    for i in range(1, columns):
        data[f"c{i}"] = (
            pa.array([f"v{r % 97}" for r in range(rows)])
            if i % 2
            else pa.array([r * 0.5 for r in range(rows)], pa.float64())
        )
    return pa.table(data)


def write_project(workdir: Path, profile: dict, sources: dict[str, list[str]]) -> None:
    """A dbt project whose only resources are `sources` (schema -> table names)."""
    (workdir / "models").mkdir(exist_ok=True)
    (workdir / "dbt_project.yml").write_text(
        "name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\nmodel-paths: ['models']\n"
    )
    (workdir / "profiles.yml").write_text(json.dumps({"bench": {"target": "t", "outputs": {"t": profile}}}))
    blocks = []
    for schema, names in sources.items():
        tables = "".join(f"      - name: {name}\n" for name in names)
        blocks.append(f"  - name: {schema.replace('.', '_')}\n    schema: {schema}\n    tables:\n{tables}")
    (workdir / "models" / "sources.yml").write_text("version: 2\nsources:\n" + "".join(blocks))


def setup_lancens(workdir: Path, tables: int, namespaces: int, rows: int, columns: int) -> tuple[dict, dict]:
    from dbt.adapters.lancens.namespace import DirectoryNamespace

    root = workdir / "warehouse"
    namespace = DirectoryNamespace(str(root))
    data = sample_table(rows, columns)
    sources: dict[str, list[str]] = {}
    for n in range(namespaces):
        namespace.create_namespace([f"bench_{n}"])
    for t in range(tables):
        schema = f"bench_{t % namespaces}"
        namespace.create_table([schema, f"t_{t}"], data)
        sources.setdefault(schema, []).append(f"t_{t}")
    profile = {"type": "lancens", "root": str(root), "schema": "bench_0", "master": "local[2]", "threads": 2}
    return profile, sources


def setup_spark(workdir: Path, tables: int, rows: int, columns: int) -> tuple[dict, dict]:
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[2]").enableHiveSupport().getOrCreate()
    spark.sql("CREATE DATABASE IF NOT EXISTS bench")
    data = sample_table(rows, columns)
    names = []
    for t in range(tables):
        location = workdir / "parquet" / f"t_{t}"
        location.mkdir(parents=True)
        pq.write_table(data, location / "part-0.parquet")
        spark.sql(f"CREATE TABLE bench.t_{t} USING parquet LOCATION '{location}'")
        names.append(f"t_{t}")
    profile = {"type": "spark", "method": "session", "host": "NA", "schema": "bench", "threads": 2}
    return profile, {"bench": names}


def docs_generate(workdir: Path) -> dict[str, float]:
    """Run `dbt docs generate`; wall seconds and the catalog step's seconds (from dbt's events)."""
    from dbt.cli.main import dbtRunner

    marks: dict[str, float] = {}

    def on_event(event) -> None:
        # From "Building catalog" to catalog.json written (manifest.json is written after it).
        name = event.info.name
        if name == "BuildingCatalog" or (
            name == "ArtifactWritten" and event.data.artifact_type == "CatalogArtifact"
        ):
            marks[name] = time.perf_counter()

    start = time.perf_counter()
    result = dbtRunner(callbacks=[on_event]).invoke(
        ["docs", "generate", "--project-dir", str(workdir), "--profiles-dir", str(workdir), "--quiet"]
    )
    wall = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"dbt docs generate failed: {result.exception}")
    catalog = json.loads((workdir / "target" / "catalog.json").read_text())
    return {
        "wall_s": wall,
        "catalog_s": marks["ArtifactWritten"] - marks["BuildingCatalog"],
        "catalog_tables": len(catalog["sources"]),
        "errors": len(catalog.get("errors") or []),
    }


def worker(kind: str, workdir: Path, tables: int, namespaces: int, rows: int, columns: int) -> None:
    start = time.perf_counter()
    if kind == "lancens":
        profile, sources = setup_lancens(workdir, tables, namespaces, rows, columns)
    else:
        profile, sources = setup_spark(workdir, tables, rows, columns)
    setup_s = time.perf_counter() - start
    write_project(workdir, profile, sources)
    cold = docs_generate(workdir)
    warm = docs_generate(workdir)
    print(json.dumps({"kind": kind, "tables": tables, "setup_s": setup_s, "cold": cold, "warm": warm}))


def run_worker(kind: str, base: Path, tables: int, args: argparse.Namespace) -> dict:
    workdir = base / f"{kind}_{tables}"
    workdir.mkdir()
    command = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--dir", str(workdir),
               "--tables", str(tables), "--namespaces", str(args.namespaces),
               "--rows", str(args.rows), "--columns", str(args.columns)]  # fmt: skip
    result = worker_result(command, workdir, kind)
    assert result is not None  # no timeout given
    return result


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--tables", type=int, default=1000, help="lancens tables")
    parser.add_argument("--namespaces", type=int, default=10)
    parser.add_argument("--spark-tables", type=int, default=200, help="tables on each side for the ratio")
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--columns", type=int, default=6)
    parser.add_argument("--worker", choices=["lancens", "spark"], help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.dir), args.tables, args.namespaces, args.rows, args.columns)
        return
    with tempfile.TemporaryDirectory(prefix="docs_catalog_") as tmp:
        base = Path(tmp)
        runs = [
            run_worker("lancens", base, args.tables, args),
            run_worker("lancens", base, args.spark_tables, args),
            run_worker("spark", base, args.spark_tables, args),
        ]
    print(f"{'adapter':<10}{'tables':>8}{'catalog s':>12}{'docs generate s':>17}{'cold s':>9}{'errors':>8}")
    for run in runs:
        warm = run["warm"]
        print(
            f"{run['kind']:<10}{warm['catalog_tables']:>8}{warm['catalog_s']:>12.2f}"
            f"{warm['wall_s']:>17.2f}{run['cold']['wall_s']:>9.2f}{warm['errors']:>8}"
        )
    ratio = runs[1]["warm"]["catalog_s"] / runs[2]["warm"]["catalog_s"]
    print(
        f"\ncatalog for {args.tables} lancens tables in {args.namespaces} namespaces: "
        f"{runs[0]['warm']['catalog_s']:.2f} s"
    )
    print(f"lancens / dbt-spark (session, parquet) catalog time at {args.spark_tables} tables: {ratio:.3f}")


if __name__ == "__main__":
    main()
