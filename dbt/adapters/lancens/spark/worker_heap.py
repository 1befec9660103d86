"""Keeping the garbage collection of a reused PySpark worker cheap.

A reused Python worker runs a full ``gc.collect()`` after every request it serves (PySpark's
``daemon.py``). Once lance, pyarrow and pandas are imported its heap holds some 80,000 tracked
objects, and each of those collections costs about 40 ms of CPU, on the same 2 cores the next
request and the query's JVM need; a query through this data source is served by several requests
(schema, pushdown, planning, one per task). In a 300-batch microbatch backfill these collections
were nearly half of the CPU its Python processes used (docs/benchmarks.md).

``gc.freeze`` moves the heap as it stands after the imports into the permanent generation, so later
collections scan only what later requests allocate. Frozen objects are still freed by reference
counting; only reference cycles that are garbage at the moment of the freeze are never collected,
which is why it happens once per process, right after the first import of lance.
"""

from __future__ import annotations

import functools
import gc


@functools.cache
def freeze_imported_heap() -> None:
    """Collect once, then exempt everything alive from later collections (once per process)."""
    gc.collect()
    gc.freeze()
