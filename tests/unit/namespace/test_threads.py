"""One DirectoryNamespace shared by several threads (dbt runs models in parallel)."""

from __future__ import annotations

import threading
from pathlib import Path

from dbt.adapters.lancens.namespace import DirectoryNamespace


def test_each_thread_sees_its_own_declaration_at_once(tmp_path: Path) -> None:
    """A snapshot pinned by one thread must not make another thread read a stale manifest."""
    ns = DirectoryNamespace(str(tmp_path))
    ns.create_namespace(["s"])
    failures: list[str] = []

    def declare_and_describe(worker: int) -> None:
        for index in range(10):
            table = ["s", f"t{worker}_{index}"]
            try:
                if not ns.table_exists(table):
                    ns.declare_table(table)
                assert ns.describe_table(table).declared_only
            except Exception as exc:  # collected: an assertion in a thread would be lost
                failures.append(f"{table}: {exc!r}")

    threads = [threading.Thread(target=declare_and_describe, args=(worker,)) for worker in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(ns.list_tables(["s"]).items) == 30
