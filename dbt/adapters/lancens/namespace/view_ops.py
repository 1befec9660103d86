"""Views: an extension of the spec, stored as ``view`` rows in ``__manifest``.

The spec reserves ``base_objects`` for view dependencies, so a view row has ``location`` NULL,
``metadata`` JSON ``{"sql": ..., "properties": {...}}`` and ``base_objects`` the object ids it reads.
Native ignores unknown object types in its listings, so roots holding views stay readable by it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dbt.adapters.lancens.namespace import errors, ids, props
from dbt.adapters.lancens.namespace.models import Page, ViewInfo
from dbt.adapters.lancens.namespace.namespace_ops import children

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace.directory import DirectoryNamespace


def view_info(view_id: list[str], row: Mapping[str, object]) -> ViewInfo:
    body = props.loads(row["metadata"])  # type: ignore[arg-type]
    bases = [ids.split(oid) for oid in (row.get("base_objects") or [])]  # type: ignore[union-attr]
    return ViewInfo(view_id, body.get("sql", ""), bases, dict(body.get("properties", {})))


class ViewOps:
    """Mixin for DirectoryNamespace: operations on views."""

    def _view_row(self: DirectoryNamespace, view_id: list[str]) -> dict | None:
        row = self._manifest.get(ids.object_id(view_id))
        return row if row is not None and row["object_type"] == "view" else None

    def _require_manifest(self: DirectoryNamespace) -> None:
        if not self.manifest_enabled:
            raise errors.UnsupportedOperationError("views need manifest_enabled=true")

    def create_view(
        self: DirectoryNamespace,
        id: Sequence[str],  # noqa: A002
        sql: str,
        base_objects: Sequence[Sequence[str]] | None = None,
        properties: Mapping[str, object] | None = None,
        replace: bool = False,
    ) -> ViewInfo:
        """Store a view; ``replace`` swaps an existing view's body but never replaces a table."""
        self._require_manifest()
        view_id = ids.validate(id, what="view", allow_root=False)
        self._require_namespace(view_id[:-1])
        if not isinstance(sql, str) or not sql.strip():
            raise errors.InvalidInputError(f"view {ids.display(view_id)}: sql must be a non-empty string")
        bases = [ids.validate(base, what="base object", allow_root=False) for base in base_objects or []]
        values = props.string_dict(properties)
        row = {
            "object_id": ids.object_id(view_id),
            "object_type": "view",
            "location": None,
            "metadata": props.dumps({"sql": sql, "properties": values}),
            "base_objects": [ids.object_id(base) for base in bases] or None,
        }
        existing = self._manifest.get(row["object_id"])
        if replace and existing is not None and existing["object_type"] == "view":
            self._manifest.upsert([row])
        elif len(view_id) == 1 and self.dir_listing_enabled and self.table_exists(view_id):
            raise errors.TableAlreadyExistsError(f"a table {ids.display(view_id)} already exists")
        else:
            try:
                self._manifest.insert([row])
            except errors.DuplicateObjectIdError as exc:
                cls = errors.ConcurrentModificationError if exc.concurrent else errors.TableAlreadyExistsError
                raise cls(f"object {ids.display(view_id)} already exists") from exc
        return ViewInfo(view_id, sql, bases, values)

    def describe_view(self: DirectoryNamespace, id: Sequence[str]) -> ViewInfo:  # noqa: A002
        self._require_manifest()
        view_id = ids.validate(id, what="view", allow_root=False)
        self._require_namespace(view_id[:-1])
        row = self._view_row(view_id)
        if row is None:
            raise errors.TableNotFoundError(f"view {ids.display(view_id)} not found")
        return view_info(view_id, row)

    def list_views(
        self: DirectoryNamespace,
        namespace_id: Sequence[str] = (),
        page_token: str | None = None,
        limit: int | None = None,
    ) -> Page:
        parent = ids.validate(namespace_id, what="namespace", allow_root=True)
        self._require_namespace(parent)
        names, token = ids.paginate(children(self, parent, "view"), page_token, limit)
        return Page(names, token)

    def drop_view(self: DirectoryNamespace, id: Sequence[str]) -> None:  # noqa: A002
        view = self.describe_view(id)
        self._manifest.delete([ids.object_id(view.id)])
