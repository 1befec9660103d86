"""Zero-copy `dbt clone`: a Lance shallow clone registered in the target namespace.

`dbt clone --state` makes each selected table of the state's schema a table of the target schema.
A Lance shallow clone writes only a manifest at the clone's own location that points at the
source's data files (Lance's base paths): no data file is copied, and every later write to the
clone (new rows, deletion files, compaction, indexes) lands under the clone's location, so the
source's files never change under the clone. The clone's location is the one the engine reserves
for the target id (`declare_table`), so the namespace, pylance and LanceDB resolve it like any
other table.

The source does not know its clones, so the clone holds the source version it reads with a tag
(`metadata/clone_holds.py`): cleanups of the source keep that version and its files, and a purge of
the source is refused while the clone reads them.

A clone replacing an existing target table drops that table first (dbt's `create or replace`):
readers briefly see no table, and the old target's history goes with it, as it does in Delta's
`CREATE OR REPLACE TABLE ... SHALLOW CLONE`, and so does the old target's hold on its source.
"""

from __future__ import annotations

import lance

from dbt.adapters.lancens.metadata import clone_holds
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors


def shallow_clone(namespace: DirectoryNamespace, source_id: list[str], target_id: list[str]) -> int:
    """Clone the source table's latest version as `target_id`; returns the clone's version."""
    if source_id == target_id:
        raise errors.InvalidInputError(f"cannot clone {'.'.join(source_id)} onto itself")
    clone_holds.hold_tag(target_id)  # a name too long for the hold tag fails before any change
    source = namespace.describe_table(source_id)
    if source.declared_only or source.version is None:
        raise errors.InvalidInputError(f"{'.'.join(source_id)} has no version to clone yet")
    if namespace.table_exists(target_id):
        clone_holds.purge(namespace, target_id)  # lets go of what the old target held
    location = namespace.declare_table(target_id).location
    options = namespace.storage_options or None
    try:
        # the hold first: a cleanup of the source between the two would otherwise remove the version
        clone_holds.hold(namespace, source_id, int(source.version), target_id)
        dataset = lance.dataset(source.location, version=source.version, storage_options=options)
        dataset.shallow_clone(location, source.version, storage_options=options)
    except BaseException:
        namespace.drop_table(target_id)  # withdraw the declaration: no empty clone stays behind
        clone_holds.release(namespace, target_id, [source.location])
        raise
    version = namespace.describe_table(target_id).version
    return int(version) if version is not None else int(source.version)
