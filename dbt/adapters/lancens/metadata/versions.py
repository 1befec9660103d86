"""Table history for dbt users: register/deregister/drop, list versions, restore, time travel.

Every dbt build commits a Lance version through the engine; this module is what the
`lancens.*` namespace macros call to look at and act on that history. Relations may be dbt relation
objects or strings `schema.table` (the schema may itself be dotted: `analytics.marts.orders`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import lance

from dbt.adapters.lancens.core.names import table_id as to_table_id
from dbt.adapters.lancens.core.runtime import LancensRuntime
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages
from dbt.adapters.lancens.namespace.versions import TVM_KEY
from dbt.adapters.lancens.spark import catalog

_MANAGED_ROOTS: set[str] = set()
PROVENANCE_COLUMNS = ("dbt_invocation_id", "dbt_model", "dbt_run_started_at", "dbt_lancens_version")


def relation_table_id(relation: Any) -> list[str]:
    """The namespace table id of a relation object or of a string `schema.table`."""
    if isinstance(relation, str):
        schema, dot, name = relation.strip().rpartition(".")
        if not dot:
            raise ValueError(f"a relation string must be `schema.table`, got {relation!r}")
        return to_table_id(schema, name)
    return to_table_id(relation.schema or "", relation.identifier or "")


def enable_version_management(namespace: DirectoryNamespace) -> None:
    """Turn the spec's table version management on for the whole root (`__manifest` metadata).

    The engine reads the flag at every call, so commits of every process on this root follow the
    four steps from now on. Never turned off here: the root is shared, another project may rely on it.
    Checked once per process and root (the adapter calls this whenever it acquires a connection)."""
    if namespace.root in _MANAGED_ROOTS:
        return
    if namespace.describe_namespace([]).properties.get(TVM_KEY, "").lower() != "true":
        namespace.alter_namespace_properties([], {TVM_KEY: "true"})
    _MANAGED_ROOTS.add(namespace.root)


# -- registration --------------------------------------------------------------------------------------
def declare_table(runtime: LancensRuntime, table_id: list[str]) -> str:
    """Reserve the table's id and location without data; returns the location."""
    return runtime.namespace.declare_table(table_id).location


def register_table(runtime: LancensRuntime, table_id: list[str], location: str) -> int | None:
    """Register an existing Lance table (under the root) as `table_id`; returns its latest version."""
    namespace = runtime.namespace
    if "://" not in location and not location.startswith("/"):
        location = f"{namespace.root.rstrip('/')}/{location}"
    info = namespace.register_table(table_id, location)
    with runtime.lock:
        catalog.sync_table(runtime.spark, namespace, table_id)
    return info.version


def deregister_table(runtime: LancensRuntime, table_id: list[str]) -> str:
    """Remove the table from the namespace, keeping its files; returns where they stay."""
    info = runtime.namespace.deregister_table(table_id)
    with runtime.lock:
        catalog.forget_table(runtime.spark, table_id)
    return info.location


def drop_table(runtime: LancensRuntime, table_id: list[str], purge: bool = False) -> str:
    """`purge=False` deregisters (files kept), `purge=True` deletes the table's data too."""
    if not purge:
        return deregister_table(runtime, table_id)
    info = runtime.namespace.drop_table(table_id)
    with runtime.lock:
        catalog.forget_table(runtime.spark, table_id)
    return info.location


# -- history -------------------------------------------------------------------------------------------
def list_versions(runtime: LancensRuntime, table_id: list[str]) -> list[dict[str, Any]]:
    """One dict per version, oldest first: version, time (UTC ISO), rows, and who made it."""
    namespace = runtime.namespace
    location = namespace.describe_table(table_id).location  # finishes interrupted managed commits
    rows = []
    for version in all_pages(namespace.list_table_versions, table_id):
        moment = (
            datetime.fromtimestamp(version.timestamp_millis / 1000, tz=UTC).isoformat(timespec="seconds")
            if version.timestamp_millis is not None
            else None
        )
        rows.append(
            {
                "version": version.version,
                "timestamp": moment,
                "rows": _row_count(namespace, location, version.version),
                **{key: version.metadata.get(key) for key in PROVENANCE_COLUMNS},
                "metadata": dict(version.metadata),
            }
        )
    return rows


def _row_count(namespace: DirectoryNamespace, location: str, version: int) -> int | None:
    """Rows of one version from its manifest's fragment statistics (no data is scanned)."""
    try:
        dataset = lance.dataset(location, version=version, storage_options=namespace.storage_options or None)
        return dataset.count_rows()
    except (OSError, ValueError):
        return None  # the version's files were cleaned up


def format_versions(table_id: list[str], rows: list[dict[str, Any]]) -> str:
    """The text table `lancens.list_table_versions` prints."""
    header = ("version", "timestamp", "rows", "invocation", "model", "run_started_at")
    lines = [
        (
            str(row["version"]),
            row["timestamp"] or "",
            "" if row["rows"] is None else str(row["rows"]),
            row["dbt_invocation_id"] or "",
            row["dbt_model"] or "",
            row["dbt_run_started_at"] or "",
        )
        for row in rows
    ]
    widths = [max(len(cell) for cell in column) for column in zip(header, *lines, strict=True)]
    render = [
        " | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in [header, *lines]
    ]
    render.insert(1, "-+-".join("-" * width for width in widths))
    return f"versions of {'.'.join(table_id)}:\n" + "\n".join(line.rstrip() for line in render)


def restore_version(
    runtime: LancensRuntime, table_id: list[str], version: int, provenance: dict[str, str]
) -> int:
    """Commit a new version whose content equals `version` (history is kept); returns the new version.

    Committed with the caller's provenance, so the history shows who restored what."""
    namespace = runtime.namespace
    namespace.describe_table_version(table_id, version)  # 11 when the version does not exist
    latest = namespace.describe_table_version(table_id).version
    properties = dict(provenance, dbt_lancens_restored_from=str(version))
    new_version = namespace.commit_table(
        table_id,
        lance.LanceOperation.Restore(version),
        read_version=latest,
        transaction_properties=properties,
    )
    with runtime.lock:
        catalog.sync_table(runtime.spark, namespace, table_id)
    return new_version


def at_version(runtime: LancensRuntime, table_id: list[str], version: int) -> str:
    """Register a temp view reading `version` of the table and return its (quoted) name.

    Temp views live in the process's Spark session, so this serves table models and queries of the
    dbt run that rendered it; a persistent (view-materialized) model cannot reference it."""
    namespace = runtime.namespace
    namespace.describe_table_version(table_id, version)  # 11 when the version does not exist
    location = namespace.describe_table(table_id).location
    name = f"lancens_at__{catalog.database_name(table_id[:-1])}__{table_id[-1]}__v{int(version)}"
    options = {
        "path": location,
        "version": str(int(version)),
        "storage_options": json.dumps(namespace.storage_options, sort_keys=True),
    }
    runtime.activate()
    runtime.spark.read.format("lance").options(**options).load().createOrReplaceTempView(name)
    return f"`{name}`"
