"""Bulk catalog read: every object of a namespace (or the whole root) from one cached manifest read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dbt.adapters.lancens.namespace import ids, layout, props
from dbt.adapters.lancens.namespace.models import ObjectEntry

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace.directory import DirectoryNamespace

_LISTED_TYPES = ("namespace", "table", "view")


class CatalogOps:
    """Mixin for DirectoryNamespace: ``list_objects``."""

    def list_objects(
        self: DirectoryNamespace, namespace_id: Sequence[str] | None = None
    ) -> list[ObjectEntry]:
        """Namespaces, tables and views under ``namespace_id`` (all levels), or everything when None.

        Root V1 tables found by directory listing are included (compatibility mode). Table versions
        are not objects of the catalog and are skipped.
        """
        parent = (
            None if namespace_id is None else ids.validate(namespace_id, what="namespace", allow_root=True)
        )
        if parent is not None:
            self._require_namespace(parent)
        entries: list[ObjectEntry] = []
        if self.manifest_enabled:
            for oid, row in self._manifest.by_id().items():
                object_id = ids.split(oid)
                if row["object_type"] not in _LISTED_TYPES or not _under(object_id, parent):
                    continue
                entries.append(_entry(self, object_id, row))
        if (parent is None or parent == []) and self.dir_listing_enabled:
            known = {tuple(entry.id) for entry in entries}
            for name in self.list_tables([]).items:
                if (name,) not in known:
                    entries.append(ObjectEntry([name], "table", self._v1_location(name)))
        return entries


def _under(object_id: list[str], parent: list[str] | None) -> bool:
    return parent is None or (len(object_id) > len(parent) and object_id[: len(parent)] == parent)


def _entry(ns: DirectoryNamespace, object_id: list[str], row: dict) -> ObjectEntry:
    body = props.loads(row["metadata"])
    kind = row["object_type"]
    if kind == "view":
        return ObjectEntry(
            object_id,
            kind,
            None,
            dict(body.get("properties", {})),
            [ids.split(oid) for oid in row.get("base_objects") or []],
        )
    location = layout.absolute_location(ns._fs, row["location"]) if kind == "table" else None
    return ObjectEntry(object_id, kind, location, body)
