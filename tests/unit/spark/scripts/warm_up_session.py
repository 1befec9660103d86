"""A fresh process: start a session as dbt does, warm it up, and report what it started.

The session is started on a background thread with Spark's output captured (as the adapter's
runtime does), then asked for again from the main thread. Prints one JSON line: `workers`, for each
Python worker kind Spark started (the module a `pyspark.daemon` serves), whether one of its forked
workers has pylance's native library loaded; `driver_jvms`, how many `java` processes this process
launched."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading


def _children(pid: int) -> list[int]:
    """Child processes of every thread of `pid` (threads and processes may end while we look)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
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

    files_dir = tempfile.mkdtemp(prefix="warm-up-")
    start = threading.Thread(
        target=get_or_create_session, kwargs={"master": "local[2]", "files_dir": files_dir}
    )
    start.start()
    start.join()
    spark = get_or_create_session(master="local[2]", files_dir=files_dir)
    warm_up(spark)
    driver_jvms = sum(1 for pid in _children(os.getpid()) if os.path.basename(_cmdline(pid)[0]) == "java")
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
    print(json.dumps({"workers": kinds, "driver_jvms": driver_jvms}, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
