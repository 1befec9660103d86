"""What every namespace operation shares: the configuration, the storage, ``__manifest``, one Lance
session, and finding a table by its identifier.

The operation classes (``NamespaceOps``, ``TableOps``, ``ViewOps``, ``CatalogOps``,
``VersionManager``) each receive this object, and ``DirectoryNamespace`` composes them behind its
public methods. One ``lance.Session`` serves every dataset the namespace opens: it shares Lance's
metadata cache, and it is what makes a ``memory://`` root visible to all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import lance

# ``lance.Session`` at runtime; pylance's stubs declare the class only under this name.
from lance.lance import _Session as LanceSession

from dbt.adapters.lancens.namespace import errors, ids, kinds, layout
from dbt.adapters.lancens.namespace.config import NamespaceConfig
from dbt.adapters.lancens.namespace.fragment_cache import FragmentCache
from dbt.adapters.lancens.namespace.manifest import ManifestTable
from dbt.adapters.lancens.namespace.models import Page, ResolvedTable
from dbt.adapters.lancens.namespace.snapshot import Row
from dbt.adapters.lancens.namespace.storage import Storage


class NamespaceContext:
    """The state one ``DirectoryNamespace`` shares between its operations (thread-safe)."""

    def __init__(self, config: NamespaceConfig) -> None:
        self.config = config
        self.root = config.root
        self.manifest_enabled = config.manifest_enabled
        self.dir_listing_enabled = config.dir_listing_enabled
        self.storage_options = dict(config.storage_options)
        self.session = LanceSession()
        self.fs = Storage(config.root, config.storage_options)
        manifest_uri = self.fs.join(ids.MANIFEST_NAME)
        self.manifest = ManifestTable(
            manifest_uri,
            config.storage_options,
            self.session,
            self.fs,
            FragmentCache(config.catalog_cache_dir, manifest_uri) if config.catalog_cache_dir else None,
            config.allow_foreign_root,
        )
        self._memory_handles: dict[str, lance.LanceDataset] = {}
        # Object stores: per table location, the dataset last opened at the newest version listed.
        # A version names immutable content, so it serves any open of that same version; which
        # version is the latest is always listed again (one request), never taken from here.
        self._opened: dict[str, lance.LanceDataset] = {}

    @property
    def lance_options(self) -> dict[str, str] | None:
        """Options for Lance calls: None rather than {} (Lance keys memory:// stores by options)."""
        return self.storage_options or None

    # ---------------------------------------------------------------- datasets
    def open_dataset(self, location: str, version: int | None = None) -> lance.LanceDataset:
        """The table at ``version`` (the latest when None).

        On S3 a dataset already opened at the version asked for is served again: a version names
        immutable content, and Lance's open by version costs a HEAD and a GET. The latest is Lance's
        own open: ONE listing of ``_versions/`` (Lance stops at the first page, where V2 names put
        the newest version first, and the listing gives the manifest's size, so no HEAD) and the
        manifest's GET unless the session holds that version already. Callers never change the
        dataset object (commits go through ``lance.LanceDataset.commit``, which returns a new one)."""
        if self.fs.lists_in_order and version is not None:
            opened = self._opened.get(location)
            if opened is not None and opened.version == version:
                return opened
        dataset = lance.dataset(
            location, version=version, storage_options=self.lance_options, session=self.session
        )
        self.remember(location, dataset)
        return self.keep(location, dataset)

    def remember(self, location: str, dataset: lance.LanceDataset) -> None:
        """A dataset this process opened or just committed (object stores): the next
        ``open_dataset`` of its version serves it. Which version is the latest is still found
        anew by every caller."""
        if self.fs.lists_in_order:
            opened = self._opened.get(location)
            if opened is None or opened.version <= dataset.version:
                self._opened[location] = dataset

    def latest_data(self, location: str) -> tuple[bool, int | None]:
        """Whether the table has a version, and (object stores) its newest version, found by
        opening it (``open_dataset``): the describe after it serves that dataset, and all resolves
        of the table inside one pinned read share it (``ManifestView.listings``; not in a view
        shared by every thread, where each finds the table's version anew)."""
        if not self.fs.lists_in_order:
            return self.has_data(location), None
        pinned = self.manifest.pinned()
        kept = pinned.listings if pinned is not None and not pinned.shared else None
        if kept is not None and location in kept:
            return kept[location]
        latest = self.open_latest(location)
        found = (latest is not None, latest.version if latest is not None else None)
        if kept is not None:
            kept[location] = found
        return found

    def open_latest(self, location: str) -> lance.LanceDataset | None:
        """``open_dataset`` of the latest version; None when the table has no finalized version
        (declared only, or before its first commit)."""
        try:
            return self.open_dataset(location)
        except ValueError as exc:
            if "not found" not in str(exc).lower():
                raise
            return None

    def keep(self, location: str, dataset: lance.LanceDataset) -> lance.LanceDataset:
        """memory:// tables vanish when no dataset references them: hold one handle per table."""
        if self.root.startswith("memory://"):
            self._memory_handles[location] = dataset
        return dataset

    def has_data(self, location: str) -> bool:
        """Whether the table has a version; memory:// data is only visible to Lance, so ask Lance."""
        if not self.root.startswith("memory://"):
            return layout.has_versions(self.fs, location)
        try:
            self.open_dataset(location)
        except ValueError:
            return False
        return True

    # ----------------------------------------------------------------- objects
    def require_namespace(self, namespace_id: list[str]) -> None:
        """Raise 0 (V1: no child namespaces) or 1 (missing) unless ``namespace_id`` exists."""
        if not namespace_id:
            return
        if not self.manifest_enabled:
            raise errors.UnsupportedOperationError(
                f"child namespace {ids.display(namespace_id)}: child namespaces need manifest_enabled=true"
            )
        row = self.manifest.get(ids.object_id(namespace_id))
        if row is None or row["object_type"] != kinds.NAMESPACE:
            raise errors.NamespaceNotFoundError(f"namespace {ids.display(namespace_id)} not found")

    def children(self, namespace_id: list[str], kind: str) -> list[str]:
        """Names of the direct children of ``namespace_id`` of ``kind`` (kinds.object_kind), sorted
        bytewise; none without a manifest."""
        if not self.manifest_enabled:
            return []
        return self.manifest.children(ids.object_id(namespace_id), kind)

    def children_page(
        self,
        namespace_id: Sequence[str],
        kind: str,
        page_token: str | None,
        limit: int | None,
        argument: str = "namespace_id",
        root_extra: Callable[[], list[str]] | None = None,
    ) -> Page:
        """One page of the names of ``namespace_id``'s children of ``kind`` (ListNamespaces,
        ListTables, ListViews): 13 for bad arguments, then 1 for a missing namespace. ``root_extra``
        adds names at the root (V1 table directories). Without a manifest there are no child
        namespaces and ListNamespaces is empty (spec 002), not an error."""
        parent = ids.validate(namespace_id, what="namespace", allow_root=True, argument=argument)
        ids.validate_page(page_token, limit)
        if kind == kinds.NAMESPACE and not self.manifest_enabled:
            return Page([], None)
        with self.manifest.snapshot():  # one __manifest open for the check and the listing
            self.require_namespace(parent)
            names = self.children(parent, kind)
        if not parent and root_extra is not None:
            names = ids.sort_names([*names, *root_extra()])
        return Page(*ids.paginate(names, page_token, limit))

    def table_row(self, table_id: list[str]) -> Row | None:
        """The id's ``table`` row, unless it is a view (a table row with the view marker)."""
        row = self.manifest.get(ids.object_id(table_id)) if self.manifest_enabled else None
        return row if row is not None and kinds.object_kind(row) == kinds.TABLE else None

    # ------------------------------------------------------------------ tables
    def v1_location(self, name: str) -> str:
        return self.fs.join(layout.v1_dir_name(name))

    def uses_v1_naming(self, table_id: list[str]) -> bool:
        return len(table_id) == 1 and (self.dir_listing_enabled or not self.manifest_enabled)

    def new_location(self, table_id: list[str]) -> str:
        """Where a new table (or view reservation) of this id goes: ``<name>.lance`` at the root
        with directory listing on (or in V1), else a fresh ``<8 random hex>_<object id>``."""
        if self.uses_v1_naming(table_id):
            return self.v1_location(table_id[0])
        return self.fs.join(layout.v2_dir_name(table_id))

    def resolve_table(self, table_id: Sequence[str], list_versions: bool = True) -> ResolvedTable:
        """Locate a table: manifest first, then (root, directory listing on) ``<name>.lance``.

        Raises 13 for a bad identifier, 1 for a missing parent namespace, 0 for a child table in V1,
        4 when the table is unknown or deregistered, or the id belongs to another object (a view's
        reserved ``<name>.lance`` is no V1 table, and a namespace ``foo`` hides ``foo.lance`` as
        listing does).

        ``list_versions=False``: for a caller that already knows a version of the table (a commit
        built on it): ``_versions/`` is not listed, and the table is reported with data and no
        latest version.
        """
        valid_id = ids.validate(table_id, what="table", allow_root=False)
        with self.manifest.snapshot():
            # the row first: in a large manifest its point query brings the namespaces' rows along
            row = self.manifest.get(ids.object_id(valid_id)) if self.manifest_enabled else None
            self.require_namespace(valid_id[:-1])
        kind = kinds.object_kind(row) if row is not None else None
        if kind == kinds.TABLE:
            assert row is not None
            location = layout.absolute_location(self.fs, row["location"])
            found, latest = self.latest_data(location) if list_versions else (True, None)
            return ResolvedTable(valid_id, location, True, not found, latest)
        if kind is None and len(valid_id) == 1 and self.dir_listing_enabled:
            location = self.v1_location(valid_id[0])
            if layout.v1_table_exists(self.fs, location):
                found, latest = self.latest_data(location) if list_versions else (True, None)
                return ResolvedTable(valid_id, location, False, not found, latest)
        raise errors.TableNotFoundError(f"table {ids.display(valid_id)} not found")

    def table_exists(self, table_id: Sequence[str]) -> bool:
        """True for tables with data and for declared-only tables (as native)."""
        try:
            self.resolve_table(table_id)
        except (errors.TableNotFoundError, errors.NamespaceNotFoundError):
            return False
        return True

    def table_location(self, table_id: Sequence[str]) -> str:
        """Where the table lives, or where it would be created (random outside V1 naming)."""
        valid_id = ids.validate(table_id, what="table", allow_root=False)
        try:
            return self.resolve_table(valid_id).location
        except errors.TableNotFoundError:
            return self.new_location(valid_id)
