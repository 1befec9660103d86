"""A timing probe for profiling, kept out of the product: spans written as JSON lines per process.

Enabled only when ``LANCENS_PROBE_DIR`` names a directory and ``benchmarks/probe`` is on
``PYTHONPATH`` (its ``sitecustomize.py`` calls ``install``). Spark passes ``PYTHONPATH`` on to its
Python daemons and workers, so the dbt process, every planner worker (data source ``schema``,
reader planning, filter pushdown, writer planning, commit) and every executor worker records:

- ``process``: from the kernel's start time of the process to this interpreter reaching ``site``
  (interpreter start); ``fork``: a worker forked from a PySpark daemon;
- ``import <module>``: imports of pyspark, pyarrow, lance, pandas, numpy, dbt and their subpackages
  we name (outermost first; nested imports carry their parent);
- calls of the functions in ``TARGETS`` (by module) and ``LANCENS_TARGETS`` (by qualified name in
  any ``dbt.adapters.lancens`` module, so the probe survives modules moving): wall time, the
  enclosing span (``parent``), for generators also the time spent inside them (``inner``);
- ``worker <module>``: one request served by a Python worker (its ``main``), from the request's
  arrival (``idle``: how long a reused worker waited for it).

Each line: ``{"pid", "ppid", "name", "start" (epoch s), "dur" (wall s), "cpu" (this process's CPU s
during the span: all its threads, so Lance's Rust threads count), "parent", ...}`` in
``<dir>/<pid>.jsonl``. ``model_profile.py`` turns them into the profile's lines.
"""

from __future__ import annotations

import functools
import importlib.abc
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

ENV = "LANCENS_PROBE_DIR"
_LOADED = time.time()

# module -> attribute paths (Class.method or function)
TARGETS: dict[str, tuple[str, ...]] = {
    "pyspark.worker": ("main",),
    "pyspark.sql.worker.create_data_source": ("main",),
    "pyspark.sql.worker.plan_data_source_read": ("main",),
    "pyspark.sql.worker.data_source_pushdown_filters": ("main",),
    "pyspark.sql.worker.write_into_data_source": ("main",),
    "pyspark.sql.worker.commit_data_source_write": ("main",),
    "pyspark.sql.worker.lookup_data_sources": ("main",),
    "pyspark.sql.session": ("SparkSession.sql", "SparkSession.Builder.getOrCreate"),
    "pyspark.sql.classic.dataframe": ("DataFrame.collect", "DataFrame.toArrow", "DataFrame.toPandas"),
    "pyspark.sql.readwriter": ("DataFrameWriter.save", "DataFrameWriter.saveAsTable"),
    "lance": ("dataset",),
    "lance.fragment": ("write_fragments",),
    "lance.dataset": ("LanceDataset.commit", "LanceDataset.merge_insert", "LanceDataset.to_table"),
    "dbt.adapters.spark.session": ("Cursor.execute",),
    # every round trip to the JVM (both py4j transports call it); recorded from 1 ms only
    "py4j.java_gateway": ("GatewayClient.send_command",),
}
MIN_SECONDS = {"GatewayClient.send_command": 0.001}
# qualified names looked for in every dbt.adapters.lancens module; "Class.*" = its public methods
LANCENS_TARGETS = (
    "LanceDataSource.schema",
    "LanceDataSource.reader",
    "LanceDataSource.writer",
    "LanceReader.__init__",
    "LanceReader.partitions",
    "LanceReader.pushFilters",
    "LanceReader.read",
    "LanceWriter.write",
    "LanceWriter.commit",
    "LanceWriter.abort",
    "commit_operation",
    "write_with_tasks",
    "open_write",
    "TableWrite.commit",
    "land",
    "SessionCatalog.register_table",
    "SessionCatalog.register_view",
    "get_or_create_session",
    "write_frame",
    "write_arrow",
    "LancensRuntime.sql",
    "LancensRuntime.refresh_table",
    "LancensRuntime.register_relation",
    "LancensRuntime._register_missing",
    "DirectoryNamespace.*",
    "ManifestTable._open",
    "ManifestTable._refresh",
    "ManifestTable.insert",
    "ManifestTable.upsert",
    "ManifestTable.delete",
    "ManifestTable.set_metadata",
)
# commit hooks are module-level functions called "commit"; only in these modules
LANCENS_MODULE_TARGETS = {"hook": ("commit",)}
IMPORT_ROOTS = ("pyspark", "pyarrow", "lance", "pandas", "numpy", "dbt", "py4j", "fsspec", "agate")
IMPORT_MIN_SECONDS = 0.002

_local = threading.local()
_directory = ""


def _stack() -> list[str]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def emit(name: str, start: float, dur: float, **extra: Any) -> None:
    """Append one span to this process's file (opened per line: workers fork and die abruptly)."""
    stack = _stack()
    record = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "thread": threading.current_thread().name,
        "name": name,
        "start": start,
        "dur": dur,
        "parent": stack[-1] if stack else None,
        **extra,
    }
    with open(os.path.join(_directory, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, default=str) + "\n")


def _timed(name: str, function: Callable) -> Callable:
    if inspect.isgeneratorfunction(function):
        return _timed_generator(name, function)
    if name.startswith("worker "):
        return _timed_worker(name, function)
    threshold = MIN_SECONDS.get(name, 0.0)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stack = _stack()
        start, begin, cpu = time.time(), time.perf_counter(), time.process_time()
        feed = None
        if name == "LanceWriter.write" and len(args) > 1:  # time the wait for Spark's input
            feed = _InputTimer(args[1])
            args = (args[0], feed, *args[2:])
        stack.append(name)
        try:
            return function(*args, **kwargs)
        finally:
            stack.pop()
            elapsed = time.perf_counter() - begin
            extra = {"input_wait": feed.waited, "batches": feed.batches} if feed is not None else {}
            if elapsed >= threshold:
                emit(name, start, elapsed, cpu=time.process_time() - cpu, **extra)

    wrapper.__lancens_probe__ = True  # type: ignore[attr-defined]
    return wrapper


def _timed_worker(name: str, main: Callable) -> Callable:
    """A Python worker's ``main(infile, outfile)``: timed from the request's arrival, not its call.

    A reused worker calls ``main`` again as soon as it finished, and ``main`` first blocks reading
    the next request; ``peek`` waits for it without consuming anything, so the span covers the work
    only and ``idle`` the wait.
    """

    @functools.wraps(main)
    def wrapper(infile: Any, *args: Any, **kwargs: Any) -> Any:
        called = time.perf_counter()
        try:
            infile.peek(1)
        except (AttributeError, OSError, ValueError):
            pass
        start, begin, cpu = time.time(), time.perf_counter(), time.process_time()
        _stack().append(name)
        try:
            return main(infile, *args, **kwargs)
        finally:
            _stack().pop()
            emit(name, start, time.perf_counter() - begin, cpu=time.process_time() - cpu, idle=begin - called)

    wrapper.__lancens_probe__ = True  # type: ignore[attr-defined]
    return wrapper


def _timed_generator(name: str, function: Callable) -> Callable:
    """Wall time from the first ``next`` to exhaustion, and ``inner``: time spent inside it."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        iterator = iter(function(*args, **kwargs))
        start, begin, cpu, inner, items = time.time(), time.perf_counter(), time.process_time(), 0.0, 0
        try:
            while True:
                step = time.perf_counter()
                _stack().append(name)
                try:
                    item = next(iterator)
                except StopIteration:
                    return
                finally:
                    _stack().pop()
                    inner += time.perf_counter() - step
                items += 1
                yield item
        finally:
            emit(
                name,
                start,
                time.perf_counter() - begin,
                cpu=time.process_time() - cpu,
                inner=inner,
                items=items,
            )

    wrapper.__lancens_probe__ = True  # type: ignore[attr-defined]
    return wrapper


class _InputTimer:
    """Wraps the batches Spark feeds a writer task: the time spent waiting for them."""

    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = iter(batches)
        self.waited = 0.0
        self.batches = 0

    def __iter__(self) -> _InputTimer:
        return self

    def __next__(self) -> Any:
        begin = time.perf_counter()
        try:
            batch = next(self._batches)
        finally:
            self.waited += time.perf_counter() - begin
        self.batches += 1
        return batch


def _patch(owner: Any, attribute: str, label: str) -> None:
    raw = inspect.getattr_static(owner, attribute, None)
    if raw is None:
        return
    if isinstance(raw, staticmethod):
        setattr(owner, attribute, staticmethod(_timed(label, raw.__func__)))
    elif isinstance(raw, classmethod):
        setattr(owner, attribute, classmethod(_timed(label, raw.__func__)))
    elif isinstance(raw, property):
        return
    elif callable(raw) and not getattr(raw, "__lancens_probe__", False):
        setattr(owner, attribute, _timed(label, raw))


def _patch_path(module: Any, path: str) -> None:
    owner_name, _, attribute = path.rpartition(".")
    owner = module
    for part in owner_name.split(".") if owner_name else ():
        owner = getattr(owner, part, None)
        if owner is None:
            return
    if attribute == "*":
        for name in dir(owner):
            if not name.startswith("_"):
                _patch(owner, name, f"{owner_name}.{name}")
        return
    _patch(owner, attribute, path)


def patch_module(module: Any) -> None:
    """Wrap the targets this module defines (lancens: only objects defined in it, not imported)."""
    name = module.__name__
    for path in TARGETS.get(name, ()):
        if path == "main":  # a Python worker's entry point, named by its module
            _patch(module, "main", f"worker {name.rsplit('.', 1)[-1]}")
        else:
            _patch_path(module, path)
    if not name.startswith("dbt.adapters.lancens"):
        return
    for path in LANCENS_MODULE_TARGETS.get(name.rsplit(".", 1)[-1], ()):
        _patch_path(module, path)
    for path in LANCENS_TARGETS:
        head = path.split(".", 1)[0]
        defined = getattr(module, head, None)
        if defined is not None and getattr(defined, "__module__", None) == name:
            _patch_path(module, path)


class _TimingFinder(importlib.abc.MetaPathFinder):
    """Times the execution of watched modules and patches them once they are loaded."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".", 1)[0] not in IMPORT_ROOTS or getattr(_local, "finding", False):
            return None
        _local.finding = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            _local.finding = False
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            stack = _stack()
            start, begin, cpu = time.time(), time.perf_counter(), time.process_time()
            stack.append(f"import {fullname}")
            try:
                original(module)
            finally:
                stack.pop()
                elapsed = time.perf_counter() - begin
                if elapsed >= IMPORT_MIN_SECONDS:
                    emit(f"import {fullname}", start, elapsed, cpu=time.process_time() - cpu)
            patch_module(module)

        try:
            loader.exec_module = exec_module  # type: ignore[method-assign]
        except (AttributeError, TypeError):
            return spec
        return spec


def _process_start() -> float:
    """When the kernel started this process (epoch seconds, 10 ms resolution)."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat", encoding="ascii") as handle:
        boot = next(int(line.split()[1]) for line in handle if line.startswith("btime"))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _after_fork() -> None:
    _local.stack = []
    emit("fork", time.time(), 0.0)


def install() -> None:
    """Start recording (idempotent); a no-op unless ``LANCENS_PROBE_DIR`` is set."""
    global _directory
    directory = os.environ.get(ENV)
    if not directory or _directory:
        return
    _directory = directory
    os.makedirs(directory, exist_ok=True)
    try:
        started = _process_start()
        emit("process", started, max(_LOADED - started, 0.0), argv=" ".join(sys.orig_argv[:4]))
    except (OSError, ValueError, IndexError, StopIteration):
        pass
    os.register_at_fork(after_in_child=_after_fork)
    sys.meta_path.insert(0, _TimingFinder())
