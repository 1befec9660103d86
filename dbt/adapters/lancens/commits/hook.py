"""The Spark data source's commit hook: route a write's one Lance commit through the namespace engine.

The data source calls this by name (`commit_hook` option) wherever Spark runs the driver-side
commit, so everything it needs travels in `args`: the engine's properties, the table id, and the
provenance recorded with the version. That commit runs in a Spark Python worker, not in the dbt
process, so the version it made is written to the file `args["report_to"]` (on the driver's host)
when one is named: the table's latest version afterwards may already be another writer's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbt.adapters.lancens.namespace import DirectoryNamespace

HOOK = "dbt.adapters.lancens.commits.hook:commit"


def commit(
    uri: str, operation: Any, read_version: int | None, storage_options: dict[str, str], args: dict[str, Any]
) -> int:
    """Commit `operation` to the table `args["table_id"]` and return its new version."""
    namespace = DirectoryNamespace.from_properties(args["namespace"])
    version = namespace.commit_table(
        args["table_id"],
        operation,
        read_version=read_version,
        transaction_properties=args.get("transaction_properties") or None,
    )
    if args.get("report_to"):
        Path(args["report_to"]).write_text(str(version))
    return version


def hook_args(
    namespace: DirectoryNamespace,
    table_id: list[str],
    transaction_properties: dict[str, str],
    report_to: str | None = None,
) -> dict[str, Any]:
    return {
        "namespace": namespace.properties,
        "table_id": table_id,
        "transaction_properties": transaction_properties,
        "report_to": report_to,
    }
