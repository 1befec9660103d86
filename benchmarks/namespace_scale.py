"""How the engine's costs grow with the catalog: 100, 1,000 and 10,000 tables in 100 namespaces.

One local root is grown through the engine (``create_table`` of a one-row table, table ``i`` in
namespace ``ns<i % 100>``, after the 100 namespaces). At each checkpoint it prints, in ms per
operation (median):

* ``create``: the last creates before the checkpoint (up to 200 of them, upkeep included: index
  optimisation and ``__manifest`` compaction are paid by the writes that trigger them);
* ``describe`` (schema and version), ``exists`` and ``list`` (one namespace's tables) on a warm
  instance in a NEW process, as in a dbt run or a Spark worker (the process that created 10,000
  tables holds their metadata in Lance's session, about 900 MB, which a reader never has). The
  root is copied at each checkpoint, and the reading processes run at the end, the checkpoints
  alternating (``--rounds``, median), so a change of load during the build is not read as a
  cost of size;
* ``cold describe``: a new instance's first ``describe_table`` (a new process, a Spark worker);
* ``cold read``: opening ``__manifest`` and reading the whole latest version, what a listing in a
  new process pays; with the files that read fetches (fragments, deletion files), which must not
  grow with the number of commits;
* the peak RSS of that reading process and of the creating one, so that memory is seen to stay
  bounded.

Then each figure relative to 100 tables, so "within 1.2x of the same at 100 tables" can be judged
(``list`` returns 100x more names at 10,000 tables than at 100, so its ratio is not a target, and
nor is ``cold read``'s, which reads 100x more rows; their file counts are).

Usage: ``python benchmarks/namespace_scale.py`` (10,000 tables; several minutes) or
``--tables 1000`` (a couple of minutes). ``--root DIR`` keeps the root (default: a temp dir).
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import lance
import pyarrow as pa
from harness import median_ms

from dbt.adapters.lancens.namespace import DirectoryNamespace, maintenance

NAMESPACES = 100
CHECKPOINTS = (100, 1000, 10000)
WINDOW = 200
DATA = pa.table({"id": [1]})
TARGET = 1.2
NOT_TARGETS = {"list", "cold read"}


def table_id(i: int) -> list[str]:
    return [f"ns{i % NAMESPACES}", f"t{i}"]


def measure(root: str, tables: int, repeat: int) -> dict[str, float]:
    """The read costs at ``tables`` tables, in this (new) process; lookups cycle through tables
    spread over the namespaces."""
    ns = DirectoryNamespace(root)
    probes = [table_id(i) for i in range(0, tables, max(1, tables // repeat))][:repeat]
    ns.list_tables(probes[0][:1])  # warm: the version in memory
    cycle = itertools.cycle(probes)
    manifest_uri = f"{root}/__manifest"
    files = maintenance.files(lance.dataset(manifest_uri))
    return {
        "describe": median_ms(lambda: ns.describe_table(next(cycle)), repeat),
        "exists": median_ms(lambda: ns.table_exists(next(cycle)), repeat),
        "list": median_ms(lambda: ns.list_tables(next(cycle)[:1]), repeat),
        "cold describe": median_ms(lambda: DirectoryNamespace(root).describe_table(next(cycle)), repeat),
        "cold read": median_ms(lambda: lance.dataset(manifest_uri).to_table(), max(5, repeat // 4)),
        "fragments": files["fragments"],
        "deletion files": files["deletion_files"],
        "reader peak RSS MB": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    """This process's own peak (``VmHWM``; ``ru_maxrss`` carries the parent's across fork)."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def measured_in_new_process(root: str, tables: int, repeat: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--measure", root, "--tables", str(tables), "--repeat", str(repeat)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=60, help="calls per measured figure")
    parser.add_argument("--root", help="where to build the root (default: a new temp dir)")
    parser.add_argument("--rounds", type=int, default=3, help="reading processes per checkpoint")
    parser.add_argument("--measure", metavar="ROOT", help=argparse.SUPPRESS)  # the reading process
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.tables, args.repeat)))
        return
    root = args.root or tempfile.mkdtemp(prefix="lancens-scale-")
    checkpoints = sorted({c for c in CHECKPOINTS if c < args.tables} | {args.tables})
    ns = DirectoryNamespace(root)
    for n in range(NAMESPACES):
        ns.create_namespace([f"ns{n}"])
    results: dict[int, dict[str, float]] = {}
    creates: list[float] = []
    copies: dict[int, str] = {}
    started = time.perf_counter()
    for i in range(args.tables):
        begin = time.perf_counter()
        ns.create_table(table_id(i), DATA)
        creates.append((time.perf_counter() - begin) * 1000)
        if i + 1 in checkpoints:
            results[i + 1] = {
                "create": statistics.median(creates[-WINDOW:]),
                "creator peak RSS MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
            if i + 1 < args.tables:  # the root grows on; the last checkpoint reads the root itself
                copies[i + 1] = f"{root}.at{i + 1}"
                shutil.copytree(root, copies[i + 1])
            else:
                copies[i + 1] = root
            print(f"{i + 1} tables after {time.perf_counter() - started:.0f}s", flush=True)
    # The reads are measured side by side at the end, the checkpoints alternating, so a change of
    # the machine's load during the build does not read as a cost of the catalog's size.
    rounds: dict[int, list[dict[str, float]]] = {c: [] for c in checkpoints}
    for _ in range(args.rounds):
        for c in checkpoints:
            rounds[c].append(measured_in_new_process(copies[c], c, args.repeat))
    for c in checkpoints:
        results[c].update({key: statistics.median(r[key] for r in rounds[c]) for key in rounds[c][0]})
    names = list(results[checkpoints[0]])
    header = f"{'tables':>20}" + "".join(f"{c:>10}" for c in checkpoints)
    print(f"\nroot {root}, {NAMESPACES} namespaces; ms per operation (median) unless named\n{header}")
    for name in names:
        print(f"{name:>20}" + "".join(f"{results[c][name]:>10.2f}" for c in checkpoints))
    base = results[checkpoints[0]]
    print(f"\nrelative to {checkpoints[0]} tables (target <= {TARGET}x; list and cold read return more rows)")
    for name in ("create", "describe", "exists", "list", "cold describe", "cold read"):
        ratios = "".join(f"{results[c][name] / base[name]:>9.2f}x" for c in checkpoints)
        verdict = (
            ""
            if name in NOT_TARGETS
            else ("  ok" if results[checkpoints[-1]][name] <= TARGET * base[name] else "  OVER")
        )
        print(f"{name:>20}{ratios}{verdict}")


if __name__ == "__main__":
    main()
