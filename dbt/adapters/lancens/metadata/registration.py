"""Registering tables in the namespace from dbt: declare, register, deregister, drop.

What the `lancens.declare_table` / `register_table` / `deregister_table` / `drop_table` macros call.
Spark's catalog follows every change through the runtime's one refresh.
"""

from __future__ import annotations

from dbt.adapters.lancens.metadata import clone_holds
from dbt.adapters.lancens.runtime.process import LancensRuntime


def declare_table(runtime: LancensRuntime, table_id: list[str]) -> str:
    """Reserve the table's id and location without data; returns the location."""
    return runtime.namespace.declare_table(table_id).location


def register_table(runtime: LancensRuntime, table_id: list[str], location: str) -> int | None:
    """Register an existing Lance table (under the root) as `table_id`; returns its latest version."""
    namespace = runtime.namespace
    if "://" not in location and not location.startswith("/"):
        location = f"{namespace.root.rstrip('/')}/{location}"
    info = namespace.register_table(table_id, location)
    runtime.refresh_table(table_id)
    return info.version


def deregister_table(runtime: LancensRuntime, table_id: list[str]) -> str:
    """Remove the table from the namespace, keeping its files; returns where they stay."""
    info = runtime.namespace.deregister_table(table_id)
    runtime.refresh_table(table_id)
    return info.location


def drop_table(runtime: LancensRuntime, table_id: list[str], purge: bool = False) -> str:
    """`purge=False` deregisters (files kept), `purge=True` deletes the table's data too, refused
    while a `dbt clone` reads them (`clone_holds`)."""
    if not purge:
        return deregister_table(runtime, table_id)
    info = clone_holds.purge(runtime.namespace, table_id)
    runtime.refresh_table(table_id)
    return info.location
