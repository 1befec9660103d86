"""Namespace operations (CreateNamespace, List, Describe, Drop, Exists, AlterProperties).

Child namespaces are ``namespace`` rows in ``__manifest``; the root's properties are the manifest
table's Lance metadata (spec), which native never reads back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.lancens.namespace import errors, ids, kinds, props
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.manifest import ManifestChange, ManifestView
from dbt.adapters.lancens.namespace.models import NamespaceInfo, Page

_ROOT_ONLY_KEYS = ("lance.namespace.",)
CHILD_TYPES = (kinds.NAMESPACE, kinds.TABLE, kinds.VIEW)


def _namespace_row(view: ManifestView, namespace_id: list[str]) -> dict[str, Any]:
    """The namespace's row in ``view``; 1 when it is gone (a concurrent drop)."""
    row = view.get(ids.object_id(namespace_id))
    if row is None or row["object_type"] != kinds.NAMESPACE:
        raise errors.NamespaceNotFoundError(f"namespace {ids.display(namespace_id)} not found")
    return row


def root_properties(metadata: Mapping[str, str]) -> dict[str, str]:
    """Root namespace properties: the __manifest metadata minus engine-internal keys."""
    return {k: v for k, v in metadata.items() if not k.startswith(_ROOT_ONLY_KEYS)}


class NamespaceOps:
    """Operations on namespaces, on the shared ``NamespaceContext``."""

    def __init__(self, context: NamespaceContext) -> None:
        self._ctx = context

    def create_namespace(
        self, id: Sequence[str], properties: Mapping[str, object] | None = None
    ) -> NamespaceInfo:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            raise errors.NamespaceAlreadyExistsError("the root namespace always exists")
        self._ctx.require_namespace(namespace_id[:-1])
        if not self._ctx.manifest_enabled:
            raise errors.UnsupportedOperationError("child namespaces need manifest_enabled=true")
        values = props.string_dict(properties)
        oid = ids.object_id(namespace_id)
        row = {
            "object_id": oid,
            "object_type": "namespace",
            "location": None,
            "metadata": props.dumps(values),
        }
        try:
            self._ctx.manifest.insert([row])
        except errors.DuplicateObjectIdError as exc:
            cls = errors.ConcurrentModificationError if exc.concurrent else errors.NamespaceAlreadyExistsError
            raise cls(f"namespace {ids.display(namespace_id)} already exists") from exc
        return NamespaceInfo(namespace_id, values)

    def list_namespaces(
        self, id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._ctx.children_page(id, kinds.NAMESPACE, page_token, limit, argument="id")

    def describe_namespace(self, id: Sequence[str]) -> NamespaceInfo:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            metadata = self._ctx.manifest.metadata() if self._ctx.manifest_enabled else {}
            return NamespaceInfo([], root_properties(metadata))
        self._ctx.require_namespace(namespace_id)
        row = self._ctx.manifest.get(ids.object_id(namespace_id))
        assert row is not None  # _require_namespace guarantees it
        return NamespaceInfo(namespace_id, props.loads(row["metadata"]))

    def namespace_exists(self, id: Sequence[str]) -> bool:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if namespace_id and not self._ctx.manifest_enabled:
            return False  # V1 has no child namespaces: none exists (not "unsupported")
        try:
            self._ctx.require_namespace(namespace_id)
        except errors.NamespaceNotFoundError:
            return False
        return True

    def drop_namespace(self, id: Sequence[str]) -> None:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            raise errors.InvalidInputError("the root namespace cannot be dropped")
        self._ctx.require_namespace(namespace_id)
        oid = ids.object_id(namespace_id)

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
            _namespace_row(view, namespace_id)
            count = sum(len(view.children(oid, kind)) for kind in CHILD_TYPES)
            if count:
                raise errors.NamespaceNotEmptyError(
                    f"namespace {ids.display(namespace_id)} is not empty: {count} child objects"
                )
            return ManifestChange(delete=[oid])

        self._ctx.manifest.commit(plan)

    def alter_namespace_properties(
        self, id: Sequence[str], updates: Mapping[str, object], removals: Sequence[str] | None = None
    ) -> NamespaceInfo:
        """Set and remove properties; the root's live in the __manifest table metadata."""
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        values = props.string_dict(updates, "updates")
        if removals is not None and (
            isinstance(removals, str)
            or not isinstance(removals, Sequence)
            or not all(isinstance(key, str) for key in removals)
        ):
            raise errors.InvalidInputError(f"removals must be a list of property names, got {removals!r}")
        if not self._ctx.manifest_enabled:
            raise errors.UnsupportedOperationError("namespace properties need manifest_enabled=true")
        if not namespace_id:
            internal = [k for k in [*values, *(removals or [])] if k.startswith(_ROOT_ONLY_KEYS)]
            if internal:
                raise errors.InvalidInputError(f"root properties {internal} are reserved for the engine")
            self._ctx.manifest.set_metadata(values, removals or ())
            return self.describe_namespace([])
        self._ctx.require_namespace(namespace_id)
        result: dict[str, str] = {}

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
            row = _namespace_row(view, namespace_id)
            current = props.loads(row.get("metadata"))
            for key in removals or ():
                current.pop(key, None)
            current.update(values)
            result.clear()
            result.update(current)
            return ManifestChange(replace=[{**row, "metadata": props.dumps(current)}])

        self._ctx.manifest.commit(plan)
        return NamespaceInfo(namespace_id, dict(result))
