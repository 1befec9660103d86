"""`dbt docs generate` over 200 tables: dbt-lancens vs dbt-spark `method: session` on Parquet, cold and warm.

    python benchmarks/docs_catalog.py --tables 20 --repeat 1   # smoke
    python benchmarks/docs_catalog.py --repeat 3               # 200 tables on each side

The tables are made once per side in its own working directory (lancens: the namespace engine, in
``--namespaces`` namespaces; dbt-spark: pyarrow Parquet files registered with ``CREATE TABLE ...
LOCATION`` in a Hive metastore in that directory), and a project declares every table as a source.
Each repeat starts a fresh process per side that runs `dbt docs generate` twice through dbtRunner:
- cold: from launching the process to the end of the first run (Python start, dbt imports, parse,
  adapter and Spark start, catalog), what a user's ``dbt docs generate`` costs;
- warm: the second run in the same process, and its catalog step alone (dbt's "Building catalog"
  event to catalog.json written).
Printed: every run, medians, and the ratios lancens/dbt-spark (goal <= 1.0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from harness import machine, ratio_line, run_measured, spread

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
KINDS = ("lancens", "spark")
SPARK_SETTINGS = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
}
GOAL = 1.0


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

    builder = SparkSession.builder.master("local[2]").enableHiveSupport()
    for key, value in SPARK_SETTINGS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sql("CREATE DATABASE IF NOT EXISTS bench")
    data = sample_table(rows, columns)
    names = []
    for t in range(tables):
        location = workdir / "parquet" / f"t_{t}"
        location.mkdir(parents=True)
        pq.write_table(data, location / "part-0.parquet")
        spark.sql(f"CREATE TABLE bench.t_{t} USING parquet LOCATION '{location}'")
        names.append(f"t_{t}")
    profile = {"type": "spark", "method": "session", "host": "NA", "schema": "bench", "threads": 2,
               "server_side_parameters": {"spark.master": "local[2]", **SPARK_SETTINGS}}  # fmt: skip
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


def setup_worker(kind: str, workdir: Path, tables: int, namespaces: int, rows: int, columns: int) -> None:
    if kind == "lancens":
        profile, sources = setup_lancens(workdir, tables, namespaces, rows, columns)
    else:
        profile, sources = setup_spark(workdir, tables, rows, columns)
    write_project(workdir, profile, sources)
    print(json.dumps({"kind": kind}))


def docs_worker(workdir: Path) -> None:
    """Two `dbt docs generate` in this fresh process; the first one's end as epoch seconds."""
    cold = docs_generate(workdir)
    cold_end = time.time()
    warm = docs_generate(workdir)
    print(json.dumps({"cold": cold, "cold_end": cold_end, "warm": warm}))


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--tables", type=int, default=200, help="tables on each side")
    parser.add_argument("--namespaces", type=int, default=10, help="lancens namespaces holding them")
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--columns", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--worker", choices=["setup", "docs"], help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "setup":
        setup_worker(args.kind, Path(args.dir), args.tables, args.namespaces, args.rows, args.columns)
        return
    if args.worker == "docs":
        docs_worker(Path(args.dir))
        return

    print(machine(), flush=True)
    script = [sys.executable, os.path.abspath(__file__)]
    cold: dict[str, list[float]] = {kind: [] for kind in KINDS}
    warm: dict[str, list[float]] = {kind: [] for kind in KINDS}
    catalog: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="docs_catalog_") as tmp:
        workdirs = {kind: Path(tmp) / kind for kind in KINDS}
        for kind, workdir in workdirs.items():
            workdir.mkdir()
            setup = run_measured(
                [*script, "--worker", "setup", "--kind", kind, "--dir", str(workdir),
                 "--tables", str(args.tables), "--namespaces", str(args.namespaces),
                 "--rows", str(args.rows), "--columns", str(args.columns)],
                workdir,
            )  # fmt: skip
            print(f"  {kind:<8} {args.tables} tables made in {setup.wall:.1f}s", flush=True)
        for attempt in range(args.repeat):
            order = KINDS if attempt % 2 == 0 else tuple(reversed(KINDS))
            for kind in order:
                launched = time.time()
                workdir = workdirs[kind]
                run = run_measured([*script, "--worker", "docs", "--dir", str(workdir)], workdir)
                result = run.result()
                cold[kind].append(result["cold_end"] - launched)
                warm[kind].append(result["warm"]["wall_s"])
                catalog[kind].append(result["warm"]["catalog_s"])
                tables, errors = result["warm"]["catalog_tables"], result["warm"]["errors"]
                if tables != args.tables or errors:
                    sys.exit(f"{kind}: catalog holds {tables} of {args.tables} tables, {errors} errors")
                print(
                    f"  repeat {attempt + 1} {kind:<8} cold {cold[kind][-1]:6.2f}s  "
                    f"warm {warm[kind][-1]:6.2f}s  warm catalog step {catalog[kind][-1]:6.2f}s",
                    flush=True,
                )
    for kind in KINDS:
        print(f"  {kind:<8} cold {spread(cold[kind])}, warm {spread(warm[kind])}")
        print(f"  {kind:<8} warm catalog step {spread(catalog[kind])}")
    print(f"\ntables={args.tables} namespaces={args.namespaces} repeat={args.repeat}\n{machine()}")
    for label, values in (("cold", cold), ("warm", warm), ("warm catalog step", catalog)):
        label = f"docs generate {label} lancens/dbt-spark"
        print(ratio_line(label, values["lancens"], values["spark"], GOAL))


if __name__ == "__main__":
    main()
