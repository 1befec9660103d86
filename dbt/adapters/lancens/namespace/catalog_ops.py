"""Bulk catalog read: every object of a namespace (or the whole root) from one cached manifest read;
the directories the root's objects own, and the repair of their reservation markers."""

from __future__ import annotations

from collections.abc import Sequence

from dbt.adapters.lancens.namespace import ids, kinds, layout, props
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.models import ObjectEntry
from dbt.adapters.lancens.namespace.snapshot import Row
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.table_ops import TableOps
from dbt.adapters.lancens.namespace.view_ops import view_info

_LISTED_KINDS = (kinds.NAMESPACE, kinds.TABLE, kinds.VIEW)


class CatalogOps:
    """``list_objects``: the whole catalog (or one namespace's part of it) in one manifest read;
    root tables found by directory listing come from ``TableOps.list_tables``."""

    def __init__(self, context: NamespaceContext, tables: TableOps) -> None:
        self._ctx = context
        self._tables = tables

    def registered_locations(self) -> dict[str, str]:
        """Every directory an object of the root owns: absolute location (no trailing ``/``) -> kind
        (``table`` or ``view``), at every namespace level, declared-only tables included.

        The one answer to "what must maintenance never touch": a view's row points at a reserved
        directory that holds only ``.lance-reserved``, so a sweep that knew only tables would take it
        for a never-published table's leftover and delete it."""
        owned: dict[str, str] = {}
        if self._ctx.manifest_enabled:
            for row in self._ctx.manifest.by_id().values():
                kind = kinds.object_kind(row)
                if kind in (kinds.TABLE, kinds.VIEW) and row.get("location"):
                    owned[layout.absolute_location(self._ctx.fs, row["location"]).rstrip("/")] = kind
        if self._ctx.dir_listing_enabled:
            for name in self._tables.list_tables([]).items:
                owned.setdefault(self._ctx.v1_location(name).rstrip("/"), kinds.TABLE)
        return owned

    def restore_reservations(self) -> list[str]:
        """Put ``.lance-reserved`` back where a registered object without data lost it; returns the
        locations repaired.

        A view or a declared table is a row plus its reserved directory (what DeclareTable writes,
        and what keeps two objects from sharing a directory). A cleanup that deleted that directory
        (as older releases did) left the row pointing at nothing; the put-if-not-exists restores
        exactly what the reservation wrote, and a marker put back meanwhile by another repair counts
        as done. Only a directory that is empty or gone is repaired: that is all such a cleanup left,
        while files without a version there mean something else lost data, which a marker would hide
        by making the table read as declared."""
        restored = []
        for location in self.registered_locations():
            marker = layout.marker_path(location, layout.RESERVED_MARKER)
            if (
                self._ctx.fs.exists(marker)
                or self._ctx.fs.has_files(location)
                or self._ctx.has_data(location)
            ):
                continue
            try:
                self._ctx.fs.put_if_not_exists(marker, layout.MARKER_CONTENT)
            except FileExistsError:
                continue
            restored.append(location)
        return restored

    def list_objects(self, namespace_id: Sequence[str] | None = None) -> list[ObjectEntry]:
        """Namespaces, tables and views under ``namespace_id`` (all levels), or everything when None.

        Root V1 tables found by directory listing are included (compatibility mode). Table versions
        are not objects of the catalog and are skipped.
        """
        parent = (
            None
            if namespace_id is None
            else ids.validate(namespace_id, what="namespace", allow_root=True, argument="namespace_id")
        )
        if parent is not None:
            self._ctx.require_namespace(parent)
        entries: list[ObjectEntry] = []
        if self._ctx.manifest_enabled:
            for oid, row in self._ctx.manifest.by_id().items():
                object_id = ids.split(oid)
                kind = kinds.object_kind(row)
                if kind not in _LISTED_KINDS or not _under(object_id, parent):
                    continue
                entries.append(_entry(self._ctx.fs, object_id, kind, row))
        if (parent is None or parent == []) and self._ctx.dir_listing_enabled:
            known = {tuple(entry.id) for entry in entries}
            for name in self._tables.list_tables([]).items:
                if (name,) not in known:
                    entries.append(ObjectEntry([name], "table", self._ctx.v1_location(name)))
        return entries


def _under(object_id: list[str], parent: list[str] | None) -> bool:
    return parent is None or (len(object_id) > len(parent) and object_id[: len(parent)] == parent)


def _entry(fs: Storage, object_id: list[str], kind: str, row: Row) -> ObjectEntry:
    if kind == kinds.VIEW:
        view = view_info(object_id, row)
        return ObjectEntry(object_id, kind, None, view.properties, view.base_objects)
    location = layout.absolute_location(fs, row["location"]) if kind == kinds.TABLE else None
    return ObjectEntry(object_id, kind, location, props.loads(row["metadata"]))
