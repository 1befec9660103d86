"""Zero-copy `dbt clone`: a Lance shallow clone registered in the target namespace.

`dbt clone --state` makes each selected table of the state's schema a table of the target schema.
A Lance shallow clone writes only a manifest at the clone's own location that points at the
source's data files (Lance's base paths): no data file is copied, and every later write to the
clone (new rows, deletion files, compaction, indexes) lands under the clone's location, so the
source never changes. The clone's location is the one the engine reserves for the target id
(`declare_table`), so the namespace, pylance and LanceDB resolve it like any other table.

A clone replacing an existing target table drops that table first (dbt's `create or replace`):
readers briefly see no table, and the old target's history goes with it, as it does in Delta's
`CREATE OR REPLACE TABLE ... SHALLOW CLONE`.
"""

from __future__ import annotations

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors


def shallow_clone(namespace: DirectoryNamespace, source_id: list[str], target_id: list[str]) -> int:
    """Clone the source table's latest version as `target_id`; returns the clone's version."""
    if source_id == target_id:
        raise errors.InvalidInputError(f"cannot clone {'.'.join(source_id)} onto itself")
    source = namespace.describe_table(source_id)
    if source.declared_only or source.version is None:
        raise errors.InvalidInputError(f"{'.'.join(source_id)} has no version to clone yet")
    if namespace.table_exists(target_id):
        namespace.drop_table(target_id)
    location = namespace.declare_table(target_id).location
    options = namespace.storage_options or None
    try:
        dataset = lance.dataset(source.location, version=source.version, storage_options=options)
        dataset.shallow_clone(location, source.version, storage_options=options)
    except BaseException:
        namespace.drop_table(target_id)  # withdraw the declaration: no empty clone stays behind
        raise
    version = namespace.describe_table(target_id).version
    return int(version) if version is not None else int(source.version)
