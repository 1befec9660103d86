"""One version of ``__manifest`` in memory, indexed the ways the operations read it.

Operations look rows up by object id (describe, exists, every write's checks) and list the direct
children of one object (list_tables, list_namespaces, list_views, a table's ``table_version`` rows,
drop_namespace's emptiness check). A snapshot answers both without scanning: ``by_id`` is a dict
and the children of each parent are kept sorted bytewise (native's listing order), built on first
use. The engine's own commits patch a snapshot into the next one (copy on write) instead of
re-reading the table, so its cost stays flat as the catalog grows.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from dbt.adapters.lancens.namespace import ids, kinds

Row = dict[str, Any]
Children = dict[str, dict[str, list[str]]]
"""parent object id ('' for the root) -> object kind -> child names, sorted bytewise."""


def _sort_key(name: str) -> bytes:
    return name.encode()


def _parent_and_name(object_id: str) -> tuple[str, str]:
    parent, _, name = object_id.rpartition(ids.DELIMITER)
    return parent, name


class ManifestSnapshot:
    """All rows of one ``__manifest`` version (0 = no manifest yet) and its table metadata."""

    def __init__(self, version: int, by_id: dict[str, Row], metadata: Mapping[str, str]) -> None:
        self.version = version
        self.by_id = by_id
        self.metadata = dict(metadata)
        self._children: Children | None = None
        self._lock = threading.Lock()

    @classmethod
    def empty(cls) -> ManifestSnapshot:
        return cls(0, {}, {})

    @classmethod
    def from_table(cls, version: int, table: pa.Table, metadata: Mapping[str, str]) -> ManifestSnapshot:
        return cls(version, {row["object_id"]: row for row in table.to_pylist()}, metadata)

    def get(self, object_id: str) -> Row | None:
        return self.by_id.get(object_id)

    def children(self, parent_id: str, kind: str) -> list[str]:
        """Names of the direct children of ``parent_id`` of ``kind`` (kinds.object_kind), sorted."""
        return self._index().get(parent_id, {}).get(kind, [])

    def _index(self) -> Children:
        with self._lock:
            if self._children is None:
                index: Children = {}
                for object_id, row in self.by_id.items():
                    parent, name = _parent_and_name(object_id)
                    index.setdefault(parent, {}).setdefault(kinds.object_kind(row), []).append(name)
                for by_kind in index.values():
                    for names in by_kind.values():
                        names.sort(key=_sort_key)
                self._children = index
            return self._children

    def patched(
        self, version: int, upserts: Iterable[Row], deletes: Iterable[str], metadata: Mapping[str, str]
    ) -> ManifestSnapshot:
        """The next snapshot after one known commit: ``upserts`` replaced or added, ``deletes`` gone."""
        by_id = dict(self.by_id)
        children = None if self._children is None else dict(self._children)
        touched: set[tuple[str, str]] = set()

        def names_of(parent: str, kind: str) -> list[str]:
            assert children is not None
            if (parent, kind) not in touched:  # copy each list once before changing it
                touched.add((parent, kind))
                by_kind = dict(children.get(parent, {}))
                by_kind[kind] = list(by_kind.get(kind, []))
                children[parent] = by_kind
            return children[parent][kind]

        for object_id in deletes:
            row = by_id.pop(object_id, None)
            if row is not None and children is not None:
                parent, name = _parent_and_name(object_id)
                names_of(parent, kinds.object_kind(row)).remove(name)
        for row in upserts:
            object_id = row["object_id"]
            old = by_id.get(object_id)
            by_id[object_id] = row
            if children is None:
                continue
            parent, name = _parent_and_name(object_id)
            if old is not None:
                names_of(parent, kinds.object_kind(old)).remove(name)
            bisect.insort(names_of(parent, kinds.object_kind(row)), name, key=_sort_key)
        patched = ManifestSnapshot(version, by_id, metadata)
        patched._children = children
        return patched
