"""``DirectoryNamespace``: the engine's public API, one object per namespace root.

It composes the operation classes (one per object kind: namespaces, tables, views, the catalog
read, table versions and commits), which all work on one shared ``NamespaceContext`` (the config,
the fsspec storage, the cached ``__manifest`` and one ``lance.Session``). Each public method here
delegates to exactly one of them, where its docstring says how it follows the spec.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import lance
import pyarrow as pa
from lance.lance import _Session as LanceSession

from dbt.adapters.lancens.namespace import commit, errors
from dbt.adapters.lancens.namespace.branch_objects import BranchObject
from dbt.adapters.lancens.namespace.branch_ops import BranchOps
from dbt.adapters.lancens.namespace.catalog_ops import CatalogOps
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.config import NamespaceConfig, normalize_root
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.datasets import TableData
from dbt.adapters.lancens.namespace.models import (
    BranchInfo,
    NamespaceInfo,
    ObjectEntry,
    Page,
    TableInfo,
    ViewInfo,
)
from dbt.adapters.lancens.namespace.namespace_ops import NamespaceOps
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.table_ops import TableOps
from dbt.adapters.lancens.namespace.versions import TableVersion, VersionEntry, VersionManager
from dbt.adapters.lancens.namespace.view_ops import ViewOps

Operation = lance.LanceOperation.BaseOperation
Properties = Mapping[str, object] | None
NullableStrings = Mapping[str, str | None] | None


class DirectoryNamespace:
    """A Lance Directory Namespace rooted at ``root`` (V1, V2 or compatibility mode)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        manifest_enabled: bool = True,
        dir_listing_enabled: bool = True,
        storage_options: Mapping[str, str] | None = None,
        catalog_cache_dir: str | os.PathLike[str] | None = None,
        allow_foreign_root: bool = False,
    ) -> None:
        if not all(
            isinstance(flag, bool) for flag in (manifest_enabled, dir_listing_enabled, allow_foreign_root)
        ):
            raise errors.InvalidInputError(
                f"manifest_enabled, dir_listing_enabled and allow_foreign_root must be booleans, got "
                f"{manifest_enabled!r}, {dir_listing_enabled!r} and {allow_foreign_root!r}"
            )
        if storage_options is not None and not isinstance(storage_options, Mapping):
            raise errors.InvalidInputError(f"storage_options must be a mapping, got {storage_options!r}")
        if catalog_cache_dir is not None and not isinstance(catalog_cache_dir, str | os.PathLike):
            raise errors.InvalidInputError(f"catalog_cache_dir must be a path, got {catalog_cache_dir!r}")
        config = NamespaceConfig(
            root=normalize_root(root),
            manifest_enabled=manifest_enabled,
            dir_listing_enabled=dir_listing_enabled,
            storage_options={str(k): str(v) for k, v in (storage_options or {}).items()},
            catalog_cache_dir=os.fspath(catalog_cache_dir) if catalog_cache_dir is not None else None,
            allow_foreign_root=allow_foreign_root,
        )
        self._context = NamespaceContext(config)
        self._versions = VersionManager(self._context)
        self._namespaces = NamespaceOps(self._context)
        self._tables = TableOps(self._context, self._versions)
        self._views = ViewOps(self._context)
        self._catalog = CatalogOps(self._context, self._tables)
        self._branches = BranchOps(self._context, self._tables)

    @classmethod
    def from_properties(cls, properties: Mapping[str, object]) -> DirectoryNamespace:
        config = NamespaceConfig.from_properties(properties)
        return cls(
            config.root,
            config.manifest_enabled,
            config.dir_listing_enabled,
            config.storage_options,
            config.catalog_cache_dir,
            config.allow_foreign_root,
        )

    @property
    def properties(self) -> dict[str, str]:
        """The properties ``from_properties`` rebuilds this namespace from (e.g. in a Spark worker)."""
        return self._context.config.to_properties()

    @property
    def root(self) -> str:
        """An absolute local path or a URI (``s3://bucket/prefix``), without a trailing slash."""
        return self._context.root

    @property
    def storage_options(self) -> dict[str, str]:
        """Lance's storage options (``storage.*`` properties without the prefix), a copy."""
        return dict(self._context.storage_options)

    @property
    def manifest_enabled(self) -> bool:
        """False: V1 mode, root tables only, no ``__manifest``."""
        return self._context.manifest_enabled

    @property
    def dir_listing_enabled(self) -> bool:
        """True: root ``<name>.lance`` directories are tables too (V1 and compatibility mode)."""
        return self._context.dir_listing_enabled

    @property
    def storage(self) -> Storage:
        """The root's file system (fsspec, with the storage options): for callers that manage files
        beside the engine's own, such as staged runs' scratch copies and cleanup of leftovers."""
        return self._context.fs

    def version_management_enabled(self) -> bool:
        """Whether commits follow the spec's table version management (the root's ``__manifest``
        metadata turns it on; never in V1 mode, which has no ``__manifest``)."""
        return self._versions.management_enabled()

    @property
    def lance_session(self) -> LanceSession:
        """The Lance session every dataset of this namespace is opened with (required for memory://)."""
        return self._context.session

    def __repr__(self) -> str:
        return f"DirectoryNamespace({self.properties!r})"

    @contextmanager
    def consistent_reads(self, shared: bool = False) -> Iterator[None]:
        """Within the block, this thread's reads see one ``__manifest`` version, found once.

        For a caller asking several questions of one catalog state (a namespace's tables and
        views; whether a name is a view or a table): on S3 each finding of the latest version is a
        request. Writes inside it plan on that version first (a conflict sends them to the latest),
        and the block's reads after a commit see the version that commit planned on last (its own
        when it landed): the thread reads what it wrote. ``shared``: the catalog state
        ``share_reads`` holds, while it holds one, instead of finding the latest."""
        with self._context.manifest.snapshot(shared):
            yield

    def share_reads(self) -> None:
        """Read the catalog state now and hold it for ``consistent_reads(shared=True)`` blocks of
        every thread, until ``end_shared_reads`` or this process's next ``__manifest`` commit.

        For reads a caller spreads over threads and calls that should agree and need not each find
        the latest ``__manifest`` version again (a request on S3 each): a dbt run filling its
        relation cache. A table's own version is still found anew by every read; another process's
        catalog change made meanwhile is seen by the first read after the sharing ends, and by
        every read that does not ask for the shared state."""
        self._context.manifest.share()

    def end_shared_reads(self) -> None:
        """End ``share_reads``: every read finds the latest catalog state again."""
        self._context.manifest.unshare()

    # ------------------------------------------------------------ namespaces (namespace_ops.py)
    def create_namespace(self, id: Sequence[str], properties: Properties = None) -> NamespaceInfo:
        return self._namespaces.create_namespace(id, properties)

    def list_namespaces(
        self, id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._namespaces.list_namespaces(id, page_token, limit)

    def describe_namespace(self, id: Sequence[str]) -> NamespaceInfo:
        return self._namespaces.describe_namespace(id)

    def namespace_exists(self, id: Sequence[str]) -> bool:
        return self._namespaces.namespace_exists(id)

    def drop_namespace(self, id: Sequence[str]) -> None:
        self._namespaces.drop_namespace(id)

    def alter_namespace_properties(
        self, id: Sequence[str], updates: Mapping[str, object], removals: Sequence[str] | None = None
    ) -> NamespaceInfo:
        return self._namespaces.alter_namespace_properties(id, updates, removals)

    # -------------------------------------------------------------------- tables (table_ops.py)
    def declare_table(self, id: Sequence[str], location: str | None = None) -> TableInfo:
        return self._tables.declare_table(id, location)

    def create_table(self, id: Sequence[str], data: TableData, properties: Properties = None) -> TableInfo:
        return self._tables.create_table(id, data, properties)

    def list_tables(
        self, namespace_id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._tables.list_tables(namespace_id, page_token, limit)

    def describe_table(
        self, id: Sequence[str], version: int | None = None, *, branch: str | None = None
    ) -> TableInfo:
        """``branch``: the table at that Lance branch (``branch_ops.py``; its own location)."""
        if branch is not None:
            return self._branches.describe_table(id, branch, version)
        return self._tables.describe_table(id, version)

    def table_exists(self, id: Sequence[str]) -> bool:
        """True for tables with data and for declared-only tables (as native)."""
        return self._context.table_exists(id)

    def dataset_at(self, location: str, version: int) -> lance.LanceDataset:
        """The table at ``location`` as of ``version``, through the engine's session. On an object
        store a version this process already opened or committed is served from memory (a version
        is immutable content, so nothing is checked); otherwise Lance opens it (a HEAD and a GET
        on S3). Callers must not change the object (commits return new ones)."""
        return self._context.open_dataset(location, version)

    def latest_version_at(self, location: str, id: Sequence[str], branch: str | None = None) -> int | None:
        """The newest version of table ``id``, stored at ``location`` (None: it has none), for a
        writer that knows where its table is and asks only whether another commit landed there.

        Without table version management that is the table's own ``_versions/`` alone: one request
        on S3, no catalog read (a drop or a move of the table is the catalog's to tell, and
        ``commit_table`` checks it). With it (as the newest catalog state this process read says:
        the flag is never turned off, and ``commit_table`` reads it again) a version another writer
        committed is the catalog's row, which may precede its manifest's final name, so this is
        ``describe_table``'s version (which finishes such a commit first). ``branch``: ``location``
        is that branch's, whose versions are always its own ``_versions/`` (``branches.py``)."""
        if branch is None and self._versions.management_known():
            return self.describe_table(id).version
        latest = self._context.open_latest(location)
        return latest.version if latest is not None else None

    def table_location(self, id: Sequence[str]) -> str:
        """Where the table lives, or where it would be created (random outside V1 naming, so a writer
        that writes fragments first passes this location on to ``commit_table``); declares nothing."""
        return self._context.table_location(id)

    def update_table_metadata(
        self,
        id: Sequence[str],
        table_metadata: NullableStrings = None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None = None,
    ) -> int:
        return self._tables.update_table_metadata(id, table_metadata, field_metadata)

    def set_table_properties(self, id: Sequence[str], properties: Mapping[str, object]) -> TableInfo:
        return self._tables.set_table_properties(id, properties)

    def register_table(self, id: Sequence[str], location: str) -> TableInfo:
        return self._tables.register_table(id, location)

    def deregister_table(self, id: Sequence[str]) -> TableInfo:
        return self._tables.deregister_table(id)

    def drop_table(self, id: Sequence[str]) -> TableInfo:
        return self._tables.drop_table(id)

    def rename_table(self, id: Sequence[str], new_id: Sequence[str]) -> TableInfo:
        return self._tables.rename_table(id, new_id)

    # ---------------------------------------------------------------------- views (view_ops.py)
    def create_view(
        self,
        id: Sequence[str],
        sql: str,
        base_objects: Sequence[Sequence[str]] | None = None,
        properties: Properties = None,
        replace: bool = False,
    ) -> ViewInfo:
        return self._views.create_view(id, sql, base_objects, properties, replace)

    def describe_view(self, id: Sequence[str]) -> ViewInfo:
        return self._views.describe_view(id)

    def list_views(
        self, namespace_id: Sequence[str] = (), page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._views.list_views(namespace_id, page_token, limit)

    def drop_view(self, id: Sequence[str]) -> None:
        self._views.drop_view(id)

    # --------------------------------------------------------------- catalog (catalog_ops.py)
    def list_objects(self, namespace_id: Sequence[str] | None = None) -> list[ObjectEntry]:
        return self._catalog.list_objects(namespace_id)

    def registered_locations(self) -> dict[str, str]:
        return self._catalog.registered_locations()

    def restore_reservations(self) -> list[str]:
        return self._catalog.restore_reservations()

    # ----------------------------------------------------------- table versions (versions.py)
    def create_table_version(
        self,
        id: Sequence[str],
        version: int,
        manifest_path: str,
        naming_scheme: str = "V2",
        metadata: dict[str, str] | None = None,
    ) -> TableVersion:
        """Make the staged manifest at ``manifest_path`` version ``version`` of table ``id`` (spec
        CreateTableVersion): 12 when that version exists, as the spec says (native pylance: 14)."""
        entry = VersionEntry(list(id), version, manifest_path, naming_scheme, dict(metadata or {}))
        return self._versions.batch_create_table_versions([entry])[0]

    def batch_create_table_versions(self, entries: Sequence[VersionEntry]) -> list[TableVersion]:
        return self._versions.batch_create_table_versions(entries)

    def list_table_versions(
        self,
        id: Sequence[str],
        descending: bool = False,
        page_token: str | None = None,
        limit: int | None = None,
    ) -> Page:
        return self._versions.list_table_versions(id, descending, page_token, limit)

    def describe_table_version(self, id: Sequence[str], version: int | None = None) -> TableVersion:
        """One version of the table; ``version=None`` is the latest (spec). Finishes an unfinished
        managed commit of that version."""
        return self._versions.describe_table_version(id, version)

    def batch_delete_table_versions(
        self, id: Sequence[str], versions: Sequence[int], ignore_missing: bool = False
    ) -> int:
        return self._versions.batch_delete_table_versions(id, versions, ignore_missing)

    # ----------------------------------------------------------- branches (branch_ops.py)
    def create_table_branch(
        self,
        id: Sequence[str],
        name: str,
        from_version: int | None = None,
        from_branch: str | None = None,
    ) -> BranchInfo:
        return self._branches.create_table_branch(id, name, from_version, from_branch)

    def list_table_branches(
        self, id: Sequence[str], page_token: str | None = None, limit: int | None = None
    ) -> Page:
        return self._branches.list_table_branches(id, page_token, limit)

    def delete_table_branch(self, id: Sequence[str], name: str) -> BranchInfo:
        return self._branches.delete_table_branch(id, name)

    def readers_of_branch(self, id: Sequence[str], name: str) -> list[str]:
        return self._branches.readers_of_branch(id, name)

    def create_table_on_branch(
        self, id: Sequence[str], name: str, schema: pa.Schema, location: str
    ) -> TableInfo:
        return self._branches.create_table_on_branch(id, name, schema, location)

    def table_location_on_branch(self, id: Sequence[str], name: str) -> str:
        return self._branches.table_location_on_branch(id, name)

    def create_namespace_on_branch(self, id: Sequence[str], name: str) -> bool:
        return self._branches.create_namespace_on_branch(id, name)

    def publish_branch(self, name: str, staged: Sequence[StagedCommit] = ()) -> dict[tuple[str, ...], int]:
        """``publish`` of ``staged`` with the rows that register what only branch ``name`` has
        (its namespaces and tables, ``branch_ops.promotion_rows``): ONE ``__manifest`` commit."""
        return commit.publish(self._versions, staged, self._branches.promotion_rows(name))

    def branches_with_objects(self) -> list[str]:
        return self._branches.branches_with_objects()

    def objects_on_branch(self, name: str) -> list[BranchObject]:
        return self._branches.objects_on_branch(name)

    def forget_on_branch(self, item: BranchObject, drop: bool = False) -> None:
        self._branches.forget_on_branch(item, drop)

    # ------------------------------------------------------------------ commits (commit.py)
    def commit_table(
        self,
        id: Sequence[str],
        operation: Operation,
        read_version: int | None = None,
        transaction_properties: Mapping[str, str] | None = None,
        *,
        location: str | None = None,
        branch: str | None = None,
    ) -> int:
        """Commit one Lance transaction to table ``id`` and return the new version.

        ``location`` is for a table that does not exist yet: outside V1 naming its directory name is
        random per ``table_location`` call, so a writer that already wrote fragments passes the
        location it wrote them to (for an existing table it must match, else 13).

        ``branch``: commit to that branch of the table instead (22 if it does not exist);
        ``read_version`` is then a version of the branch, ``location`` the branch's."""
        request = commit.CommitRequest.of(
            id, operation, read_version, transaction_properties, location, branch
        )
        return commit.commit_table(self._versions, request)

    def stage_table_commit(
        self,
        id: Sequence[str],
        operation: Operation,
        read_version: int | None,
        transaction_properties: Mapping[str, str] | None = None,
        *,
        location: str | None = None,
    ) -> StagedCommit:
        """Write a new version that no namespace reader sees until ``publish`` (needs table version
        management, else 0); ``location`` as for ``commit_table``.

        ``read_version`` has no default: a staged version is published later, together with other
        tables', so the caller names the version it builds on (None: the latest when staged)."""
        request = commit.CommitRequest.of(id, operation, read_version, transaction_properties, location)
        return commit.stage_table_commit(self._versions, request)

    def stage_next_commit(
        self,
        prior: StagedCommit,
        operation: Operation,
        transaction_properties: Mapping[str, str] | None = None,
    ) -> StagedCommit:
        """Stage a version on top of ``prior`` (itself staged, not yet published), for a change that
        must become visible with it: an index built on a model's new rows. ``publish`` takes both."""
        if not isinstance(prior, StagedCommit):
            raise errors.InvalidInputError(f"prior must be a StagedCommit, got {prior!r}")
        request = commit.CommitRequest.of(prior.id, operation, prior.version, transaction_properties, None)
        return commit.stage_next_commit(self._versions, prior, request.operation, request.properties)

    def publish(
        self, staged: Sequence[StagedCommit], views: Sequence[ViewInfo] = ()
    ) -> dict[tuple[str, ...], int]:
        """Make staged commits visible in ONE ``__manifest`` commit; returns each table's last new
        version. A table may have several consecutive staged versions (``stage_next_commit``).
        12 and nothing published if any of those versions was taken.

        ``views`` are created or replaced in that same commit (an extension: the spec's batch
        carries table versions only), so a view never appears without the new tables it reads."""
        new, replaced = self._views.publish_rows(views)
        try:
            return commit.publish(self._versions, staged, new, replaced)
        except Exception:  # raised before the commit point: the new views' reservations go
            self._views.release_rows(new)
            raise

    def restore_table(self, id: Sequence[str], version: int) -> int:
        """Add a version whose content equals ``version`` (11 if it does not exist)."""
        return commit.restore_table(self._versions, id, version)
