"""The one function every table write's commit goes through.

In the dbt process (`TableWrite.commit`) and in a Spark worker committing a catalog-table INSERT
(`hook.commit`) alike: staged as the run's version of the table during an atomic-publish run,
otherwise committed as the table's next version by the engine. Imports the engine only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.commit import StagedCommit

if TYPE_CHECKING:
    from dbt.adapters.lancens.runtime.staging import RunPublisher


def land(
    namespace: DirectoryNamespace,
    table_id: Sequence[str],
    operation: lance.LanceOperation.BaseOperation,
    read_version: int | None,
    properties: dict[str, str],
    *,
    location: str | None = None,
    staging: RunPublisher | None = None,
    staged_tip: StagedCommit | None = None,
) -> int:
    """Stage (`staging` given) or commit `operation` on the table; returns its (future) version.

    `location`: where the operation's data files were written, for a table that does not exist
    yet (an existing table's location is its own). `staged_tip`: the run's last staged version of
    the table, which `operation` was computed against (a further write of it in the same run)."""
    if staging is not None and staged_tip is not None:
        return staging.stage_chained(namespace, table_id, operation, properties, staged_tip)
    if staging is not None:
        if location is None:
            raise ValueError("a staged write needs the location its data files were written to")
        return staging.stage(namespace, table_id, operation, read_version, properties, location)
    return namespace.commit_table(
        list(table_id),
        operation,
        read_version=read_version,
        transaction_properties=properties or None,
        location=location,
    )
