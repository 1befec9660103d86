"""Table history for dbt users: list versions, restore one, read one (time travel).

Every dbt build commits a Lance version through the engine with who made it (provenance); this is
what the `lancens.list_table_versions` / `restore_table` macros and `at_version` call.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import lance

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.definitions.names import database_name
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages
from dbt.adapters.lancens.runtime.process import LancensRuntime
from dbt.adapters.lancens.runtime.table_frames import table_frame
from dbt.adapters.lancens.text.quoting import quote

PROVENANCE_COLUMNS = ("dbt_invocation_id", "dbt_model", "dbt_run_started_at", "dbt_lancens_version")


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
    runtime.namespace.describe_table_version(table_id, version)  # 11 when the version does not exist
    write = open_write(runtime, table_id, must_exist=True)
    properties = dict(provenance, dbt_lancens_restored_from=str(version))
    return write.commit(lance.LanceOperation.Restore(version), properties)


def at_version(runtime: LancensRuntime, table_id: list[str], version: int) -> str:
    """Register a temp view reading `version` of the table and return its (quoted) name.

    Temp views live in the process's Spark session, so this serves table models and queries of the
    dbt run that rendered it; a persistent (view-materialized) model cannot reference it."""
    namespace = runtime.namespace
    namespace.describe_table_version(table_id, version)  # 11 when the version does not exist
    location = namespace.describe_table(table_id).location
    name = f"lancens_at__{database_name(table_id[:-1])}__{table_id[-1]}__v{int(version)}"
    table_frame(runtime, location, version).createOrReplaceTempView(name)
    return quote(name)
