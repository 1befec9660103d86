"""Worker processes for the namespace race tests (``test_namespace_races.py``).

``Racers`` starts N processes once (spawn: pylance is not fork-safe) and then runs rounds: each
round hands every worker one task, the workers build their namespace client first and then wait
on one barrier, so all N operations start at the same instant. Each worker reports what happened
as an ``Outcome``: ``ok`` with a value, a spec error code (ours or native's), or ``raw`` with the
exception text: the tests assert that ``raw`` never happens.
"""

from __future__ import annotations

import multiprocessing
import queue
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

RESULT_TIMEOUT = 300


@dataclass(frozen=True)
class Task:
    """One worker's part of a round: ``action`` (a key of ACTIONS) on the root at ``root``."""

    action: str
    root: str
    storage: dict[str, str] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    worker: int
    kind: str  # "ok", "code" (our NamespaceError), "native" (lance_namespace error) or "raw"
    value: Any = None

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    def __repr__(self) -> str:
        return f"<{self.worker}:{self.kind}:{self.value!r}>"


def _ours(task: Task) -> Any:
    from dbt.adapters.lancens.namespace import DirectoryNamespace

    return DirectoryNamespace(task.root, storage_options=task.storage or None, **task.args.get("mode", {}))


def _native(task: Task) -> Any:
    import lance.namespace as native_ns

    options = {f"storage.{key}": value for key, value in task.storage.items()}
    return native_ns.DirectoryNamespace(root=task.root, **options)


def _rows(worker: int) -> Any:
    import pyarrow as pa

    return pa.table({"writer": [worker] * (worker + 1)})


def _ipc(worker: int) -> bytes:
    import io

    import pyarrow as pa

    table = _rows(worker)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _each(names: list[list[str]], create: Callable[[list[str]], object]) -> list[tuple[list[str], str]]:
    """Run ``create`` for every id, recording each one's outcome (so earlier successes are known)."""
    done = []
    for name in names:
        try:
            create(name)
            done.append((name, "ok"))
        except Exception as exc:  # recorded per id; the test decides what is acceptable
            done.append((name, f"{type(exc).__name__}: {getattr(exc, 'code', '')} {exc}"))
    return done


def _create_namespaces(ns: Any, task: Task, worker: int) -> object:
    names = [[f"w{worker}_{k}"] for k in range(task.args.get("count", 3))]
    return _each(names, ns.create_namespace)


def _native_create_namespaces(ns: Any, task: Task, worker: int) -> object:
    import lance_namespace as lns

    names = [[f"w{worker}_{k}"] for k in range(task.args.get("count", 3))]
    return _each(names, lambda name: ns.create_namespace(lns.CreateNamespaceRequest(id=name)))


def _create_tables(ns: Any, task: Task, worker: int) -> object:
    names = [[*task.args["namespace"], f"w{worker}_{k}"] for k in range(task.args.get("count", 3))]
    return _each(names, lambda name: ns.create_table(name, _rows(worker)))


def _native_create_tables(ns: Any, task: Task, worker: int) -> object:
    import lance_namespace as lns

    names = [[*task.args["namespace"], f"w{worker}_{k}"] for k in range(task.args.get("count", 3))]
    return _each(names, lambda name: ns.create_table(lns.CreateTableRequest(id=name), _ipc(worker)))


def _native_create_table(ns: Any, task: Task, worker: int) -> object:
    import lance_namespace as lns

    return ns.create_table(lns.CreateTableRequest(id=task.args["id"]), _ipc(worker)).location


def _native_drop_table(ns: Any, task: Task, worker: int) -> object:
    import lance_namespace as lns

    return ns.drop_table(lns.DropTableRequest(id=task.args["id"])).location


def _read_while_writing(ns: Any, task: Task, worker: int) -> object:
    """Read ``__manifest`` while the other workers commit (and compact it): the version opened
    before the round must read the same rows every time, and each cold read of the latest version
    must list at least the tables the previous one listed in ``namespace`` (nothing vanishes).
    Returns how many cold reads were made; any difference raises (reported as raw)."""
    import time

    import lance

    from dbt.adapters.lancens.namespace import DirectoryNamespace

    old = lance.dataset(
        f"{task.root}/__manifest", version=task.args["version"], storage_options=task.storage or None
    )
    before = sorted(old.to_table(columns=["object_id"])["object_id"].to_pylist())
    listed: set[str] = set()
    reads = 0
    deadline = time.monotonic() + task.args["seconds"]
    while time.monotonic() < deadline:
        fresh = DirectoryNamespace(task.root, storage_options=task.storage or None)
        now = set(fresh.list_tables(task.args["namespace"]).items)
        if not listed <= now:
            raise AssertionError(f"tables vanished from a later version: {sorted(listed - now)}")
        listed = now
        again = sorted(old.to_table(columns=["object_id"])["object_id"].to_pylist())
        if again != before:
            raise AssertionError(f"version {old.version} changed while others compacted")
        reads += 1
    return reads


ACTIONS: dict[str, tuple[Callable[[Task], Any], Callable[[Any, Task, int], object]]] = {
    "create_namespaces": (_ours, _create_namespaces),
    "native_create_namespaces": (_native, _native_create_namespaces),
    "create_tables": (_ours, _create_tables),
    "read_while_writing": (_ours, _read_while_writing),
    "native_create_tables": (_native, _native_create_tables),
    "create_table": (
        _ours,
        lambda ns, task, worker: ns.create_table(task.args["id"], _rows(worker)).location,
    ),
    "native_create_table": (_native, _native_create_table),
    "native_drop_table": (_native, _native_drop_table),
    "create_namespace": (_ours, lambda ns, task, worker: ns.create_namespace(task.args["id"]).id),
    "drop_namespace": (_ours, lambda ns, task, worker: ns.drop_namespace(task.args["id"])),
    "create_view": (_ours, lambda ns, task, worker: ns.create_view(task.args["id"], f"select {worker}").sql),
    "declare_table": (_ours, lambda ns, task, worker: ns.declare_table(task.args["id"]).location),
    "register_table": (
        _ours,
        lambda ns, task, worker: ns.register_table(task.args["id"], task.args["location"]).location,
    ),
    "deregister_table": (_ours, lambda ns, task, worker: ns.deregister_table(task.args["id"]).location),
    "drop_table": (_ours, lambda ns, task, worker: ns.drop_table(task.args["id"]).location),
    "rename_table": (
        _ours,
        lambda ns, task, worker: (
            ns.rename_table(
                task.args["id"], task.args.get("new_id") or [*task.args["id"][:-1], f"r{worker}"]
            ).location
        ),
    ),
}


def _serve(worker: int, tasks: Any, results: Any, barrier: Any) -> None:
    from lance_namespace.errors import LanceNamespaceError

    from dbt.adapters.lancens.namespace import errors

    while True:
        task = tasks.get()
        if task is None:
            return
        make, act = ACTIONS[task.action]
        try:
            client = make(task)
            barrier.wait(timeout=RESULT_TIMEOUT)
            results.put(Outcome(worker, "ok", act(client, task, worker)))
        except errors.NamespaceError as exc:
            results.put(Outcome(worker, "code", exc.code))
        except LanceNamespaceError as exc:
            results.put(Outcome(worker, "native", int(exc.code)))
        except BaseException as exc:  # reported, never swallowed: the tests fail on "raw"
            results.put(Outcome(worker, "raw", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


class Racers:
    """N long-lived worker processes; ``round`` runs one task per worker, all released together."""

    def __init__(self, workers: int = 4) -> None:
        context = multiprocessing.get_context("spawn")
        self.size = workers
        self._barrier = context.Barrier(workers)
        self._results = context.Queue()
        self._tasks = [context.Queue() for _ in range(workers)]
        self._processes = [
            context.Process(
                target=_serve, args=(i, self._tasks[i], self._results, self._barrier), daemon=True
            )
            for i in range(workers)
        ]
        for process in self._processes:
            process.start()

    def round(self, tasks: list[Task]) -> list[Outcome]:
        """Run ``tasks[i]`` in worker i (one task for all when a single one is given)."""
        tasks = tasks * self.size if len(tasks) == 1 else tasks
        assert len(tasks) == self.size
        for task, inbox in zip(tasks, self._tasks, strict=True):
            inbox.put(task)
        outcomes = []
        for _ in tasks:
            try:
                outcomes.append(self._results.get(timeout=RESULT_TIMEOUT))
            except queue.Empty as exc:
                raise AssertionError(f"a racer did not answer within {RESULT_TIMEOUT}s") from exc
        return sorted(outcomes, key=lambda outcome: outcome.worker)

    def close(self) -> None:
        for inbox in self._tasks:
            inbox.put(None)
        for process in self._processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
