"""Namespace operations (CreateNamespace, List, Describe, Drop, Exists, AlterProperties).

Child namespaces are ``namespace`` rows in ``__manifest``; the root's properties are the manifest
table's Lance metadata (spec), which native never reads back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dbt.adapters.lancens.namespace import errors, ids, kinds, props
from dbt.adapters.lancens.namespace.manifest import ManifestChange, ManifestView
from dbt.adapters.lancens.namespace.models import NamespaceInfo, Page

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace.directory import DirectoryNamespace

_ROOT_ONLY_KEYS = ("lance.namespace.",)
CHILD_TYPES = (kinds.NAMESPACE, kinds.TABLE, kinds.VIEW)


def children(ns: DirectoryNamespace, namespace_id: list[str], kind: str) -> list[str]:
    """Names of direct children of ``namespace_id`` of ``kind`` (kinds.object_kind), sorted bytewise."""
    if not ns.manifest_enabled:
        return []
    return ns._manifest.children(ids.object_id(namespace_id), kind)


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
    """Mixin for DirectoryNamespace: operations on namespaces."""

    def create_namespace(
        self: DirectoryNamespace,
        id: Sequence[str],  # noqa: A002
        properties: Mapping[str, object] | None = None,
    ) -> NamespaceInfo:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            raise errors.NamespaceAlreadyExistsError("the root namespace always exists")
        self._require_namespace(namespace_id[:-1])
        if not self.manifest_enabled:
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
            self._manifest.insert([row])
        except errors.DuplicateObjectIdError as exc:
            cls = errors.ConcurrentModificationError if exc.concurrent else errors.NamespaceAlreadyExistsError
            raise cls(f"namespace {ids.display(namespace_id)} already exists") from exc
        return NamespaceInfo(namespace_id, values)

    def list_namespaces(
        self: DirectoryNamespace,
        id: Sequence[str] = (),  # noqa: A002
        page_token: str | None = None,
        limit: int | None = None,
    ) -> Page:
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        ids.validate_page(page_token, limit)
        if not self.manifest_enabled:
            return Page([], None)  # spec 002: V1 has no namespaces, ListNamespaces is empty
        self._require_namespace(namespace_id)
        names, token = ids.paginate(children(self, namespace_id, kinds.NAMESPACE), page_token, limit)
        return Page(names, token)

    def describe_namespace(self: DirectoryNamespace, id: Sequence[str]) -> NamespaceInfo:  # noqa: A002
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            metadata = self._manifest.metadata() if self.manifest_enabled else {}
            return NamespaceInfo([], root_properties(metadata))
        self._require_namespace(namespace_id)
        row = self._manifest.get(ids.object_id(namespace_id))
        assert row is not None  # _require_namespace guarantees it
        return NamespaceInfo(namespace_id, props.loads(row["metadata"]))

    def namespace_exists(self: DirectoryNamespace, id: Sequence[str]) -> bool:  # noqa: A002
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if namespace_id and not self.manifest_enabled:
            return False  # V1 has no child namespaces: none exists (not "unsupported")
        try:
            self._require_namespace(namespace_id)
        except errors.NamespaceNotFoundError:
            return False
        return True

    def drop_namespace(self: DirectoryNamespace, id: Sequence[str]) -> None:  # noqa: A002
        namespace_id = ids.validate(id, what="namespace", allow_root=True)
        if not namespace_id:
            raise errors.InvalidInputError("the root namespace cannot be dropped")
        self._require_namespace(namespace_id)
        oid = ids.object_id(namespace_id)

        def plan(view: ManifestView, concurrent: bool) -> ManifestChange:
            _namespace_row(view, namespace_id)
            count = sum(len(view.children(oid, kind)) for kind in CHILD_TYPES)
            if count:
                raise errors.NamespaceNotEmptyError(
                    f"namespace {ids.display(namespace_id)} is not empty: {count} child objects"
                )
            return ManifestChange(delete=[oid])

        self._manifest.commit(plan)

    def alter_namespace_properties(
        self: DirectoryNamespace,
        id: Sequence[str],  # noqa: A002
        updates: Mapping[str, object],
        removals: Sequence[str] | None = None,
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
        if not self.manifest_enabled:
            raise errors.UnsupportedOperationError("namespace properties need manifest_enabled=true")
        if not namespace_id:
            internal = [k for k in [*values, *(removals or [])] if k.startswith(_ROOT_ONLY_KEYS)]
            if internal:
                raise errors.InvalidInputError(f"root properties {internal} are reserved for the engine")
            self._manifest.set_metadata(values, removals or ())
            return self.describe_namespace([])
        self._require_namespace(namespace_id)
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

        self._manifest.commit(plan)
        return NamespaceInfo(namespace_id, dict(result))
