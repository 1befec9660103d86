"""A worker's heap is frozen once, after lance is imported, so later full collections skip it."""

from __future__ import annotations

import subprocess
import sys

# A fresh interpreter, as a forked worker is: nothing frozen before the first dataset open.
CHILD = """
import gc

import lance  # noqa: F401 - what a worker has imported by its first dataset open

from dbt.adapters.lancens.spark.worker_heap import freeze_imported_heap

assert gc.get_freeze_count() == 0
freeze_imported_heap()
frozen = gc.get_freeze_count()
object()  # anything allocated later stays collectable
freeze_imported_heap()  # once per process
print(frozen, gc.get_freeze_count())
"""


def test_the_imported_heap_is_frozen_once() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = (int(n) for n in done.stdout.split())
    assert first > 10_000  # lance and pyarrow's objects, no longer scanned by each collection
    assert second == first
