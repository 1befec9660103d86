"""``DirectoryNamespace``: configuration, table resolution and the version-API delegation.

The operations themselves live in mixins, one file per object kind (namespaces, tables, views,
catalog reads); this class holds the state they share: the config, the fsspec storage, the cached
``__manifest`` and one ``lance.Session`` (shared metadata cache; it also makes ``memory://`` roots
visible to every dataset this namespace opens).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import lance

from dbt.adapters.lancens.namespace import errors, ids, kinds, layout
from dbt.adapters.lancens.namespace.catalog_ops import CatalogOps
from dbt.adapters.lancens.namespace.config import NamespaceConfig, normalize_root
from dbt.adapters.lancens.namespace.manifest import ManifestTable
from dbt.adapters.lancens.namespace.models import Page, ResolvedTable
from dbt.adapters.lancens.namespace.namespace_ops import NamespaceOps
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.table_ops import TableOps
from dbt.adapters.lancens.namespace.view_ops import ViewOps

if TYPE_CHECKING:
    from dbt.adapters.lancens.namespace.commit import StagedCommit
    from dbt.adapters.lancens.namespace.versions import TableVersion, VersionManager


class DirectoryNamespace(NamespaceOps, TableOps, ViewOps, CatalogOps):
    """A Lance Directory Namespace rooted at ``root`` (V1, V2 or compatibility mode)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        manifest_enabled: bool = True,
        dir_listing_enabled: bool = True,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(manifest_enabled, bool) or not isinstance(dir_listing_enabled, bool):
            raise errors.InvalidInputError(
                f"manifest_enabled and dir_listing_enabled must be booleans, got "
                f"{manifest_enabled!r} and {dir_listing_enabled!r}"
            )
        if storage_options is not None and not isinstance(storage_options, Mapping):
            raise errors.InvalidInputError(f"storage_options must be a mapping, got {storage_options!r}")
        self._config = NamespaceConfig(
            root=normalize_root(root),
            manifest_enabled=manifest_enabled,
            dir_listing_enabled=dir_listing_enabled,
            storage_options={str(k): str(v) for k, v in (storage_options or {}).items()},
        )
        self._session = lance.Session()
        self._fs = Storage(self._config.root, self._config.storage_options)
        self._manifest = ManifestTable(
            self._fs.join(ids.MANIFEST_NAME), self._config.storage_options, self._session, self._fs
        )
        self._version_manager: VersionManager | None = None
        self._memory_handles: dict[str, lance.LanceDataset] = {}

    @classmethod
    def from_properties(cls, properties: Mapping[str, object]) -> DirectoryNamespace:
        config = NamespaceConfig.from_properties(properties)
        return cls(config.root, config.manifest_enabled, config.dir_listing_enabled, config.storage_options)

    @property
    def properties(self) -> dict[str, str]:
        return self._config.to_properties()

    @property
    def root(self) -> str:
        return self._config.root

    @property
    def storage_options(self) -> dict[str, str]:
        return dict(self._config.storage_options)

    @property
    def manifest_enabled(self) -> bool:
        return self._config.manifest_enabled

    @property
    def dir_listing_enabled(self) -> bool:
        return self._config.dir_listing_enabled

    @property
    def lance_session(self) -> lance.Session:
        """The Lance session every dataset of this namespace is opened with (required for memory://)."""
        return self._session

    def __repr__(self) -> str:
        return f"DirectoryNamespace({self.properties!r})"

    # ------------------------------------------------------------- shared internals
    @property
    def _lance_options(self) -> dict[str, str] | None:
        """Options for Lance calls: None rather than {} (Lance keys memory:// stores by options)."""
        return self.storage_options or None

    def _open_dataset(self, location: str, version: int | None = None) -> lance.LanceDataset:
        dataset = lance.dataset(
            location, version=version, storage_options=self._lance_options, session=self._session
        )
        return self._keep(location, dataset)

    def _keep(self, location: str, dataset: lance.LanceDataset) -> lance.LanceDataset:
        """memory:// tables vanish when no dataset references them: hold one handle per table."""
        if self.root.startswith("memory://"):
            self._memory_handles[location] = dataset
        return dataset

    def _has_data(self, location: str) -> bool:
        """Whether the table has a version; memory:// data is only visible to Lance, so ask Lance."""
        if not self.root.startswith("memory://"):
            return layout.has_versions(self._fs, location)
        try:
            self._open_dataset(location)
        except ValueError:
            return False
        return True

    def _require_namespace(self, namespace_id: list[str]) -> None:
        """Raise 0 (V1: no child namespaces) or 1 (missing) unless ``namespace_id`` exists."""
        if not namespace_id:
            return
        if not self.manifest_enabled:
            raise errors.UnsupportedOperationError(
                f"child namespace {ids.display(namespace_id)}: child namespaces need manifest_enabled=true"
            )
        row = self._manifest.get(ids.object_id(namespace_id))
        if row is None or row["object_type"] != "namespace":
            raise errors.NamespaceNotFoundError(f"namespace {ids.display(namespace_id)} not found")

    def _v1_location(self, name: str) -> str:
        return self._fs.join(layout.v1_dir_name(name))

    def _uses_v1_naming(self, table_id: list[str]) -> bool:
        return len(table_id) == 1 and (self.dir_listing_enabled or not self.manifest_enabled)

    def _table_row(self, table_id: list[str]) -> dict[str, Any] | None:
        """The id's ``table`` row, unless it is a view (a table row with the view marker)."""
        row = self._manifest.get(ids.object_id(table_id)) if self.manifest_enabled else None
        return row if row is not None and kinds.object_kind(row) == kinds.TABLE else None

    def _resolve_table(self, table_id: Sequence[str]) -> ResolvedTable:
        """Locate a table: manifest first, then (root, directory listing on) ``<name>.lance``.

        Raises 13 for a bad identifier, 1 for a missing parent namespace, 0 for a child table in V1,
        4 when the table is unknown or deregistered, or the id belongs to another object (a view's
        reserved ``<name>.lance`` is no V1 table, and a namespace ``foo`` hides ``foo.lance`` as
        listing does).
        """
        table_id = ids.validate(table_id, what="table", allow_root=False)
        with self._manifest.snapshot():
            self._require_namespace(table_id[:-1])
            row = self._manifest.get(ids.object_id(table_id)) if self.manifest_enabled else None
        kind = kinds.object_kind(row) if row is not None else None
        if kind == kinds.TABLE:
            assert row is not None
            location = layout.absolute_location(self._fs, row["location"])
            return ResolvedTable(table_id, location, True, not self._has_data(location))
        if kind is None and len(table_id) == 1 and self.dir_listing_enabled:
            location = self._v1_location(table_id[0])
            if layout.v1_table_exists(self._fs, location):
                return ResolvedTable(table_id, location, False, not self._has_data(location))
        raise errors.TableNotFoundError(f"table {ids.display(table_id)} not found")

    # ------------------------------------------------- table versions (versions.py, by A2)
    @property
    def _versions(self) -> VersionManager:
        if self._version_manager is None:
            from dbt.adapters.lancens.namespace.versions import VersionManager

            self._version_manager = VersionManager(self)
        return self._version_manager

    def create_table_version(self, *args: Any, **kwargs: Any) -> TableVersion:
        """See versions.VersionManager.create_table_version."""
        return self._versions.create_table_version(*args, **kwargs)

    def batch_create_table_versions(self, *args: Any, **kwargs: Any) -> list[TableVersion]:
        """See versions.VersionManager.batch_create_table_versions."""
        return self._versions.batch_create_table_versions(*args, **kwargs)

    def list_table_versions(
        self,
        id: Sequence[str],  # noqa: A002 - the public API names it ``id``
        descending: bool = False,
        page_token: str | None = None,
        limit: int | None = None,
    ) -> Page:
        return self._versions.list_table_versions(id, descending, page_token, limit)

    def describe_table_version(self, id: Sequence[str], version: int | None = None) -> TableVersion:  # noqa: A002
        """One version of the table; ``version=None`` is the latest (spec). Finishes an unfinished
        managed commit of that version."""
        return self._versions.describe_table_version(id, version)

    def batch_delete_table_versions(
        self,
        id: Sequence[str],  # noqa: A002
        versions: Sequence[int],
        ignore_missing: bool = False,
    ) -> int:
        return self._versions.batch_delete_table_versions(id, versions, ignore_missing)

    def commit_table(
        self,
        id: Sequence[str],  # noqa: A002
        operation: lance.LanceOperation.BaseOperation,
        read_version: int | None = None,
        transaction_properties: Mapping[str, str] | None = None,
        *,
        location: str | None = None,
    ) -> int:
        """Commit one Lance transaction to table ``id`` and return the new version (see commit.py).

        ``location`` is for a table that does not exist yet: outside V1 naming its directory name is
        random per ``table_location`` call, so a writer that already wrote fragments passes the
        location it wrote them to (for an existing table it must match, else 13)."""
        return self._versions.commit_table(
            id, operation, read_version, _strings(transaction_properties), location=location
        )

    def stage_table_commit(
        self,
        id: Sequence[str],  # noqa: A002
        operation: lance.LanceOperation.BaseOperation,
        read_version: int | None = None,
        transaction_properties: Mapping[str, str] | None = None,
        *,
        location: str | None = None,
    ) -> StagedCommit:
        """Write a new version that no namespace reader sees until ``publish`` (needs table version
        management, else 0); ``location`` as for ``commit_table``. See commit.stage_table_commit."""
        return self._versions.stage_table_commit(
            id, operation, read_version, _strings(transaction_properties), location=location
        )

    def publish(self, staged: Sequence[StagedCommit]) -> dict[tuple[str, ...], int]:
        """Make staged commits of several tables visible in ONE ``__manifest`` commit; returns the
        new version per table id. 12 and nothing published if any of those versions was taken."""
        return self._versions.publish(staged)

    def restore_table(self, *args: Any, **kwargs: Any) -> int:
        """See versions.VersionManager.restore_table."""
        return self._versions.restore_table(*args, **kwargs)


def _strings(properties: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if properties is None else {str(k): str(v) for k, v in properties.items()}
