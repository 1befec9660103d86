"""Side-by-side timings of this engine and pylance's native DirectoryNamespace.

N tables (one row each) in a child namespace, same data, one run; prints the median per call for
create, list, describe (with schema and version: native's ``load_detailed_metadata``) and exists,
and the ratio ours/native. Usage: ``python benchmarks/namespace_ops.py --tables 1000``.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from collections.abc import Callable

import lance.namespace as native_ns
import lance_namespace as lns
import pyarrow as pa

from dbt.adapters.lancens.namespace import DirectoryNamespace

DATA = pa.table({"id": [1], "name": ["x"]})


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def median_ms(call: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def run(tables: int, repeat: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as ours_root, tempfile.TemporaryDirectory() as native_root:
        ours = DirectoryNamespace(ours_root)
        theirs = native_ns.DirectoryNamespace(root=native_root)
        ours.create_namespace(["bench"])
        theirs.create_namespace(lns.CreateNamespaceRequest(id=["bench"]))
        payload = ipc(DATA)
        create_ours, create_native = [], []
        for i in range(tables):
            start = time.perf_counter()
            ours.create_table(["bench", f"t{i}"], DATA)
            create_ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs.create_table(lns.CreateTableRequest(id=["bench", f"t{i}"]), payload)
            create_native.append(time.perf_counter() - start)
        probe = f"t{tables // 2}"
        results = {
            "create": (statistics.median(create_ours) * 1000, statistics.median(create_native) * 1000),
            "list": (
                median_ms(lambda: ours.list_tables(["bench"]), repeat),
                median_ms(lambda: theirs.list_tables(lns.ListTablesRequest(id=["bench"])), repeat),
            ),
            "describe": (
                median_ms(lambda: ours.describe_table(["bench", probe]), repeat),
                median_ms(
                    lambda: theirs.describe_table(
                        lns.DescribeTableRequest(id=["bench", probe], load_detailed_metadata=True)
                    ),
                    repeat,
                ),
            ),
            "exists": (
                median_ms(lambda: ours.table_exists(["bench", probe]), repeat),
                median_ms(lambda: theirs.table_exists(lns.TableExistsRequest(id=["bench", probe])), repeat),
            ),
        }
        assert len(ours.list_tables(["bench"]).items) == tables
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    print(f"{'op':<10}{'ours ms':>10}{'native ms':>11}{'ratio':>8}   ({args.tables} tables)")
    for op, (ours, native) in run(args.tables, args.repeat).items():
        print(f"{op:<10}{ours:>10.3f}{native:>11.3f}{ours / native:>8.2f}")


if __name__ == "__main__":
    main()
