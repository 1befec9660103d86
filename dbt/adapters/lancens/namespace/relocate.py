"""Moving a table directory without copying its data (rename of a root ``<name>.lance`` table).

On a local filesystem a directory rename is atomic and copies nothing, so the table simply moves.
Object stores have no directory rename, so there the new V2 directory becomes a Lance shallow clone
(storage-layout spec: base paths) whose files stay in the old directory; the old directory gets a
``.lance-deregistered`` marker so directory listing no longer shows it. Either way plain
``lance.dataset(new_location)`` reads the table, and dropping it later removes both directories.
"""

from __future__ import annotations

import os

from dbt.adapters.lancens.namespace import layout
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.models import ResolvedTable


def move_table_dir(context: NamespaceContext, source: str, destination: str) -> str:
    """Make the table at ``source`` readable at ``destination``; return ``destination``.

    The move is also the claim on the table: of two renames racing, the second finds no ``source``
    to rename (local) or finds the ``.lance-deregistered`` marker already written (object stores),
    and gets FileNotFoundError or FileExistsError before touching anything."""
    if context.fs.local:
        os.rename(source, destination)
        return destination
    claim = layout.marker_path(source, layout.DEREGISTERED_MARKER)
    context.fs.put_if_not_exists(claim, layout.MARKER_CONTENT)
    try:
        if layout.has_versions(context.fs, source):
            dataset = context.open_dataset(source)
            dataset.shallow_clone(destination, dataset.version, storage_options=context.lance_options)
        else:  # declared only: just move the reservation
            reserved = layout.marker_path(destination, layout.RESERVED_MARKER)
            context.fs.put_if_not_exists(reserved, layout.MARKER_CONTENT)
            context.fs.rm(source, recursive=True)
    except BaseException:
        undo_move(context, source, destination)
        raise
    return destination


def undo_move(context: NamespaceContext, source: str, destination: str) -> None:
    """Put a table moved by ``move_table_dir`` back (its rename lost in ``__manifest``)."""
    if context.fs.local:
        os.rename(destination, source)
        return
    if context.fs.exists(destination):
        context.fs.rm(destination, recursive=True)
    if context.fs.has_files(source):
        context.fs.rm(layout.marker_path(source, layout.DEREGISTERED_MARKER))
    else:  # a declared-only table: its reservation was moved, put it back
        context.fs.put_if_not_exists(
            layout.marker_path(source, layout.RESERVED_MARKER), layout.MARKER_CONTENT
        )


def cloned_from(context: NamespaceContext, resolved: ResolvedTable) -> list[str]:
    """The old directories a renamed table still reads from (dropped with it): those
    ``move_table_dir`` marked ``.lance-deregistered``. Another table's directory that a shallow
    clone of it reads (``dbt clone``) carries no marker and is never among them."""
    if resolved.declared_only or context.fs.local:
        return []
    try:
        dataset = context.open_dataset(resolved.location)
    except (ValueError, OSError):
        return []  # already deleted (a concurrent drop of a V1 table)
    prefix = context.fs.join("")
    bases = {base.path.rstrip("/") for base in dataset.base_paths().values() if base.path.startswith(prefix)}
    return [
        base
        for base in sorted(bases - {resolved.location})
        if context.fs.exists(layout.marker_path(base, layout.DEREGISTERED_MARKER))
    ]
