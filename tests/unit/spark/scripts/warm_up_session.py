"""A fresh process: start a session, warm it up, and report which Python workers hold lance.

Prints one JSON line: for each Python worker kind Spark started (the module a `pyspark.daemon`
serves), whether one of its forked workers has pylance's native library loaded."""

from __future__ import annotations

import json
import os
import sys


def _children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found += [int(child) for child in handle.read().split()]
    return found


def _descendants(pid: int) -> list[int]:
    result, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            result.append(child)
            todo.append(child)
    return result


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return [part.decode() for part in handle.read().split(b"\0") if part]


def _loads_lance(pid: int) -> bool:
    with open(f"/proc/{pid}/maps") as handle:
        return any("/lance/" in line and ".so" in line for line in handle)


def main() -> None:
    from dbt.adapters.lancens.spark import get_or_create_session
    from dbt.adapters.lancens.spark.warmup import warm_up

    spark = get_or_create_session(master="local[2]")
    warm_up(spark)
    kinds: dict[str, bool] = {}
    for pid in _descendants(os.getpid()):
        try:
            argv = _cmdline(pid)
            if "pyspark.daemon" not in argv:
                continue
            after = argv[argv.index("pyspark.daemon") + 1 :]
            kind = after[0] if after else "pyspark.worker"
            kinds[kind] = kinds.get(kind, False) or any(_loads_lance(child) for child in _children(pid))
        except (FileNotFoundError, ProcessLookupError):
            continue
    print(json.dumps(kinds, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
