"""Moving a table directory without copying its data (rename of a root ``<name>.lance`` table).

On a local filesystem a directory rename is atomic and copies nothing, so the table simply moves.
Object stores have no directory rename, so there the new V2 directory becomes a Lance shallow clone
(storage-layout spec: base paths) whose files stay in the old directory; the old directory gets a
``.lance-deregistered`` marker so directory listing no longer shows it. Either way plain
``lance.dataset(new_location)`` reads the table, and dropping it later removes both directories.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from dbt.adapters.lancens.namespace import layout
from dbt.adapters.lancens.namespace.models import ResolvedTable

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace.directory import DirectoryNamespace


def move_table_dir(ns: DirectoryNamespace, source: str, destination: str) -> str:
    """Make the table at ``source`` readable at ``destination``; return ``destination``."""
    if ns._fs._local:
        os.rename(source, destination)
        return destination
    if not layout.has_versions(ns._fs, source):  # declared only: just move the reservation
        ns._fs.put_if_not_exists(
            layout.marker_path(destination, layout.RESERVED_MARKER), layout.MARKER_CONTENT
        )
        ns._fs.rm(source, recursive=True)
        return destination
    dataset = ns._open_dataset(source)
    dataset.shallow_clone(destination, dataset.version, storage_options=ns._lance_options)
    ns._fs.put_if_not_exists(layout.marker_path(source, layout.DEREGISTERED_MARKER), layout.MARKER_CONTENT)
    return destination


def cloned_from(ns: DirectoryNamespace, resolved: ResolvedTable) -> list[str]:
    """Directories under the root that a shallow-cloned table still reads from (dropped with it)."""
    if resolved.declared_only or ns._fs._local:
        return []
    dataset = ns._open_dataset(resolved.location)
    prefix = ns._fs.join("")
    return [
        base.path.rstrip("/")
        for base in dataset.base_paths().values()
        if base.path.startswith(prefix) and base.path.rstrip("/") != resolved.location
    ]
