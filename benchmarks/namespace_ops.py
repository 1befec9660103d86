"""Side-by-side timings of this engine and pylance's native DirectoryNamespace, and how ours grows.

Both namespaces get the same one-row tables in a child namespace ``bench``, created alternately in
one run. At each checkpoint (100 and 1,000 tables, and ``--tables``) the median per call is
printed for:

* ``create``: the last creates before the checkpoint (up to 100 of them);
* ``describe`` (with schema and version: native's ``load_detailed_metadata``), ``exists``,
  ``list page`` (the first 100 names) and ``list all`` on a warm instance;
* ``cold describe``: a new instance's first ``describe_table`` (a new process, a Spark commit hook),
  where ours answers from the ``object_id`` index once the manifest is large.

Then the growth of ours from 100 tables to the largest checkpoint: the targets are describe,
exists and a list page within 2x (a full listing returns 100x more names, so it is shown but not a
target), and create at 1,000 tables within 1.5x native.

Native rewrites its whole manifest on each create (O(tables) per call, and it never deletes old
data files), so it is built only up to ``--native-tables`` (default 1,000).
Usage: ``python benchmarks/namespace_ops.py --tables 10000``.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from collections.abc import Callable

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa
from harness import median_ms

from dbt.adapters.lancens.namespace import DirectoryNamespace, maintenance

DATA = pa.table({"id": [1], "name": ["x"]})
CHECKPOINTS = (100, 1000)
WINDOW = 100
PAGE = 100
GROWTH_TARGETS = {"describe": 2.0, "exists": 2.0, "list page": 2.0, "cold describe": 2.0}
CREATE_TARGET = 1.5


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def measure_ours(root: str, probe: list[str], repeat: int) -> dict[str, float]:
    ours = DirectoryNamespace(root)
    ours.list_tables(["bench"])  # warm: the version in memory, as in a running dbt process
    return {
        "describe": median_ms(lambda: ours.describe_table(probe), repeat),
        "exists": median_ms(lambda: ours.table_exists(probe), repeat),
        "list page": median_ms(lambda: ours.list_tables(["bench"], limit=PAGE), repeat),
        "list all": median_ms(lambda: ours.list_tables(["bench"]), max(3, repeat // 5)),
        "cold describe": median_ms(lambda: DirectoryNamespace(root).describe_table(probe), repeat),
    }


def measure_native(root: str, probe: list[str], repeat: int) -> dict[str, float]:
    theirs = native_ns.DirectoryNamespace(root=root)
    detailed = lns.DescribeTableRequest(id=probe, load_detailed_metadata=True)
    return {
        "describe": median_ms(lambda: theirs.describe_table(detailed), repeat),
        "exists": median_ms(lambda: theirs.table_exists(lns.TableExistsRequest(id=probe)), repeat),
        "list page": median_ms(
            lambda: theirs.list_tables(lns.ListTablesRequest(id=["bench"], limit=PAGE)), repeat
        ),
        "list all": median_ms(
            lambda: theirs.list_tables(lns.ListTablesRequest(id=["bench"])), max(3, repeat // 5)
        ),
        "cold describe": median_ms(
            lambda: native_ns.DirectoryNamespace(root=root).describe_table(detailed), repeat
        ),
    }


def run(tables: int, native_tables: int, repeat: int) -> dict[int, dict[str, tuple[float, float | None]]]:
    """{checkpoint: {op: (ours ms, native ms or None)}}."""
    checkpoints = sorted({c for c in CHECKPOINTS if c < tables} | {tables})
    results: dict[int, dict[str, tuple[float, float | None]]] = {}
    with tempfile.TemporaryDirectory() as ours_root, tempfile.TemporaryDirectory() as native_root:
        ours = DirectoryNamespace(ours_root)
        theirs = native_ns.DirectoryNamespace(root=native_root)
        ours.create_namespace(["bench"])
        theirs.create_namespace(lns.CreateNamespaceRequest(id=["bench"]))
        payload = ipc(DATA)
        create_ours: list[float] = []
        create_native: list[float] = []
        for i in range(tables):
            create_ours.append(timed(lambda i=i: ours.create_table(["bench", f"t{i}"], DATA)))
            if i < native_tables:
                request = lns.CreateTableRequest(id=["bench", f"t{i}"])
                create_native.append(timed(lambda r=request: theirs.create_table(r, payload)))
            count = i + 1
            if count not in checkpoints:
                continue
            probe = ["bench", f"t{count // 2}"]
            native_here = count <= native_tables
            mine = measure_ours(ours_root, probe, repeat)
            native = measure_native(native_root, probe, repeat) if native_here else {}
            row: dict[str, tuple[float, float | None]] = {
                "create": (
                    statistics.median(create_ours[-WINDOW:]),
                    statistics.median(create_native[-WINDOW:]) if native_here else None,
                )
            }
            row.update({op: (value, native.get(op)) for op, value in mine.items()})
            results[count] = row
            report_checkpoint(count, row, ours_root)
        assert len(ours.list_tables(["bench"]).items) == tables
    return results


def report_checkpoint(count: int, row: dict[str, tuple[float, float | None]], ours_root: str) -> None:
    print(f"\n{count} tables")
    print(f"  {'op':<15}{'ours ms':>10}{'native ms':>11}{'ratio':>8}")
    for op, (mine, native) in row.items():
        ratio = f"{mine / native:>8.2f}" if native else f"{'-':>8}"
        native_text = f"{native:>11.3f}" if native else f"{'-':>11}"
        print(f"  {op:<15}{mine:>10.3f}{native_text}{ratio}")
    manifest = lance.dataset(f"{ours_root}/__manifest")
    print(
        f"  __manifest: {manifest.count_rows()} rows, {len(manifest.get_fragments())} fragments, "
        f"unindexed rows per index {maintenance.coverage(manifest)}",
        flush=True,
    )


def report_growth(results: dict[int, dict[str, tuple[float, float | None]]]) -> None:
    first, last = min(results), max(results)
    print(f"\ngrowth of ours from {first} to {last} tables (target)")
    for op in results[first]:
        growth = results[last][op][0] / results[first][op][0]
        target = GROWTH_TARGETS.get(op)
        verdict = "" if target is None else f"  (<= {target}x: {'met' if growth <= target else 'NOT met'})"
        print(f"  {op:<15}{growth:>8.2f}x{verdict}")
    if 1000 in results and results[1000]["create"][1]:
        mine, native = results[1000]["create"]
        assert native is not None
        verdict = "met" if mine / native <= CREATE_TARGET else "NOT met"
        print(f"create at 1000 tables: {mine / native:.2f}x native (<= {CREATE_TARGET}x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--native-tables", type=int, default=1000, help="build native only this far")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    results = run(args.tables, min(args.native_tables, args.tables), args.repeat)
    report_growth(results)


if __name__ == "__main__":
    main()
