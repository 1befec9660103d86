"""Views: an extension of the spec, stored so that native pylance keeps working on the root.

A view is a ``table`` row whose ``location`` is a reserved directory (``.lance-reserved``, exactly
what DeclareTable writes) and whose ``metadata`` JSON holds the view's properties plus
``"lancens.view": "true"`` and ``"lancens.view.sql"``; ``base_objects`` lists the object ids it
reads (the column the spec reserves for view dependencies). Native sees a declared table: it can
list, describe and drop it, and its writes (which reject unknown object types) keep working.
This engine reports such rows only as views (see kinds.object_kind).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.lancens.namespace import errors, ids, kinds, layout, props
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.manifest import ManifestChange, ManifestView
from dbt.adapters.lancens.namespace.models import Page, ViewInfo
from dbt.adapters.lancens.namespace.snapshot import Row
from dbt.adapters.lancens.namespace.table_ops import release, reserve


def view_info(view_id: list[str], row: Mapping[str, Any]) -> ViewInfo:
    """Decode a view row: the marker keys are storage, everything else is the view's properties."""
    body = props.loads(row["metadata"])
    sql = str(body.pop(kinds.VIEW_SQL, ""))
    body.pop(kinds.VIEW_MARKER, None)
    bases = [ids.split(oid) for oid in (row.get("base_objects") or [])]
    return ViewInfo(view_id, sql, bases, body)


class ViewOps:
    """Operations on views, on the shared ``NamespaceContext``."""

    def __init__(self, context: NamespaceContext) -> None:
        self._ctx = context

    def _view_row(self, view_id: list[str]) -> Row | None:
        row = self._ctx.manifest.get(ids.object_id(view_id))
        return row if row is not None and kinds.object_kind(row) == kinds.VIEW else None

    def _require_manifest(self) -> None:
        if not self._ctx.manifest_enabled:
            raise errors.UnsupportedOperationError("views need manifest_enabled=true")

    def create_view(
        self,
        id: Sequence[str],
        sql: str,
        base_objects: Sequence[Sequence[str]] | None = None,
        properties: Mapping[str, object] | None = None,
        replace: bool = False,
    ) -> ViewInfo:
        """Store a view; ``replace`` swaps an existing view's body but never replaces a table.

        A new view first reserves its directory (put-if-not-exists of ``.lance-reserved``) and then
        inserts its row, like DeclareTable; a loser of a race removes its reservation."""
        view_id, row = self._new_row(id, sql, base_objects, properties)
        info = view_info(view_id, row)
        if replace and self._replace_view(view_id, row):
            return info
        if self._ctx.manifest.get(row["object_id"]) is not None or self._ctx.table_exists(view_id):
            raise errors.TableAlreadyExistsError(f"object {ids.display(view_id)} already exists")
        location = self._ctx.new_location(view_id)
        reserve(self._ctx.fs, view_id, location)
        try:
            self._ctx.manifest.insert([{**row, "location": layout.relative_location(self._ctx.fs, location)}])
        except errors.DuplicateObjectIdError as exc:
            release(self._ctx.fs, location)
            cls = errors.ConcurrentModificationError if exc.concurrent else errors.TableAlreadyExistsError
            raise cls(f"object {ids.display(view_id)} already exists") from exc
        except errors.NamespaceNotFoundError:
            release(self._ctx.fs, location)
            raise
        return info

    def _new_row(
        self,
        id: Sequence[str],
        sql: str,
        base_objects: Sequence[Sequence[str]] | None,
        properties: Mapping[str, object] | None,
    ) -> tuple[list[str], dict[str, Any]]:
        """A view's id and its row without a location, checked (13 for bad input, 1 for a missing
        namespace)."""
        self._require_manifest()
        view_id = ids.validate(id, what="view", allow_root=False)
        self._ctx.require_namespace(view_id[:-1])
        if not isinstance(sql, str) or not sql.strip():
            raise errors.InvalidInputError(f"view {ids.display(view_id)}: sql must be a non-empty string")
        if base_objects is not None and (
            isinstance(base_objects, str) or not isinstance(base_objects, Sequence)
        ):
            raise errors.InvalidInputError(
                f"base_objects must be a list of identifiers, got {base_objects!r}"
            )
        bases = [
            ids.validate(base, what="base object", allow_root=False, argument="base_objects")
            for base in base_objects or []
        ]
        values = props.string_dict(properties)
        reserved = kinds.reserved_keys(values)
        if reserved:
            raise errors.InvalidInputError(f"view {ids.display(view_id)}: properties {reserved} are reserved")
        return view_id, {
            "object_id": ids.object_id(view_id),
            "object_type": kinds.TABLE,
            "metadata": props.dumps({**values, kinds.VIEW_MARKER: "true", kinds.VIEW_SQL: sql}),
            "base_objects": [ids.object_id(base) for base in bases] or None,
        }

    def publish_rows(self, views: Sequence[ViewInfo]) -> tuple[list[Row], list[Row]]:
        """The rows that create or replace ``views`` within a publish commit: (new views' rows, each
        with a freshly reserved directory, replaced views' whole rows). 4-style 'already exists'
        for an id that is a table; the caller releases the new rows' locations if the commit fails."""
        new: list[Row] = []
        replaced: list[Row] = []
        try:
            for view in views:
                view_id, row = self._new_row(view.id, view.sql, view.base_objects, view.properties)
                existing = self._ctx.manifest.get(row["object_id"])
                if existing is not None and kinds.object_kind(existing) == kinds.VIEW:
                    replaced.append({**existing, **row, "location": existing["location"]})
                    continue
                if existing is not None or self._ctx.table_exists(view_id):
                    raise errors.TableAlreadyExistsError(f"object {ids.display(view_id)} already exists")
                location = self._ctx.new_location(view_id)
                reserve(self._ctx.fs, view_id, location)
                new.append({**row, "location": layout.relative_location(self._ctx.fs, location)})
        except BaseException:
            self.release_rows(new)
            raise
        return new, replaced

    def release_rows(self, rows: Sequence[Row]) -> None:
        """Undo ``publish_rows``' reservations of new views the publish did not insert."""
        for row in rows:
            release(self._ctx.fs, layout.absolute_location(self._ctx.fs, row["location"]))

    def _replace_view(self, view_id: list[str], row: dict[str, Any]) -> bool:
        """Swap the body of an existing view in one commit; False when there is no view to replace."""

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange | None:
            existing = view.get(row["object_id"])
            if existing is None or kinds.object_kind(existing) != kinds.VIEW:
                return None
            return ManifestChange(replace=[{**existing, **row, "location": existing["location"]}])

        return self._ctx.manifest.commit(plan) is not None

    def describe_view(self, id: Sequence[str]) -> ViewInfo:
        self._require_manifest()
        view_id = ids.validate(id, what="view", allow_root=False)
        with self._ctx.manifest.snapshot():  # one __manifest version for the parent and the row
            self._ctx.require_namespace(view_id[:-1])
            row = self._view_row(view_id)
        if row is None:
            raise errors.TableNotFoundError(f"view {ids.display(view_id)} not found")
        return view_info(view_id, row)

    def list_views(
        self, namespace_id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._ctx.children_page(namespace_id, kinds.VIEW, page_token, limit)

    def drop_view(self, id: Sequence[str]) -> None:
        """Remove the row exactly once (a racing drop gets 4), then the reserved directory (already
        gone counts as done, as for tables)."""
        view_id = self.describe_view(id).id
        row = self._view_row(view_id)
        assert row is not None  # describe_view found it

        def plan(manifest: ManifestView, concurrent: bool) -> ManifestChange:
            current = manifest.get(row["object_id"])
            if current is None or current["location"] != row["location"]:
                raise errors.TableNotFoundError(
                    f"view {ids.display(view_id)} not found: dropped concurrently"
                )
            return ManifestChange(delete=[row["object_id"]])

        self._ctx.manifest.commit(plan)
        try:
            self._ctx.fs.rm(layout.absolute_location(self._ctx.fs, row["location"]), recursive=True)
        except FileNotFoundError:
            pass
