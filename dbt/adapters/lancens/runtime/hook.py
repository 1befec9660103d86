"""The `lance` data source's commit hook for catalog tables: a Spark `INSERT INTO` lands through the
engine.

The data source calls the hook by name (`commit_hook` option) in the Python worker where Spark runs
the driver-side commit, so everything it needs travels in `args`: the engine's properties, the
table id and the provenance recorded with the version. It imports the engine only, never dbt.
The adapter's own writes never come here: they commit in the dbt process (`table_write`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.landing import DIRECT

HOOK = "dbt.adapters.lancens.runtime.hook:commit"


def commit(
    uri: str, operation: Any, read_version: int | None, storage_options: dict[str, str], args: dict[str, Any]
) -> int:
    """Commit `operation` to the table `args["table_id"]` and return its new version (committed at
    once: a Spark worker holds no atomic-publish run)."""
    namespace = DirectoryNamespace.from_properties(args["namespace"])
    return DIRECT.land(
        namespace, args["table_id"], operation, read_version, args.get("transaction_properties") or {}
    )


def hook_args(
    namespace: DirectoryNamespace, table_id: Sequence[str], transaction_properties: dict[str, str]
) -> dict[str, Any]:
    return {
        "namespace": namespace.properties,
        "table_id": list(table_id),
        "transaction_properties": transaction_properties,
    }
