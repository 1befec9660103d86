"""How the process's writes land, decided once: committed at once, or staged for a run's publish.

The runtime holds one `Landing` (`LancensRuntime.landing`): `DirectLanding`, whose every change is
the table's (or view's) next version as soon as it lands, unless an atomic-publish run is in
progress, whose `RunPublisher` (`staging.py`) stages them and makes them visible together at its
end. A write, an index build, a view, `persist_docs` and `lance_maintenance` call the landing's
methods and never ask which one they hold, so the difference lives here and in `staging.py` only.

A Spark worker committing a catalog-table INSERT (`hook.commit`) lands through `DirectLanding` as
well, so this module imports the engine only, never dbt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import lance
from lance.dataset import Index

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.models import TableInfo, ViewInfo


@dataclass(frozen=True)
class ReadTarget:
    """Where a staged version can be read: a path, and a version there (None: its latest)."""

    path: str
    version: int | None


@dataclass(frozen=True)
class IndexTarget:
    """The version a table's index changes are planned on, and where they land.

    In an atomic-publish run the rows may only exist as the run's staged version, read elsewhere
    than the table's directory (a new table's scratch copy): its index files are built there and
    must end up in the table."""

    dataset: lance.LanceDataset  # the version the indexes are built on
    location: str  # the table's directory, where the index files must be
    read_path: str  # where `dataset` is read (the table's directory, or a scratch copy)
    version: int  # the table version `dataset` is, or will be once published
    # whether an index missing rows can be optimised: Lance's `optimize_indices` commits by itself,
    # so only where every change is visible at once
    optimizes: bool


class Landing(Protocol):
    """What differs between committing at once and staging for a run's publish."""

    @property
    def visible_at_once(self) -> bool:
        """Whether a landed version is what readers see at once, so a failed run must undo what it
        landed itself (a staged version is dropped with the run instead)."""
        ...

    def staged_tip(self, table_id: Sequence[str]) -> StagedCommit | None:
        """The table's last version staged in this run (a further write builds on it), if any."""
        ...

    def read_target(self, table_id: Sequence[str]) -> ReadTarget | None:
        """Where the run reads the table's staged content; None when it has none."""
        ...

    def staged_dataset(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> lance.LanceDataset | None:
        """The run's staged content of the table; None when it has none."""
        ...

    def version_read(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> int | None:
        """The table's version a query planned now reads, for a write to refuse to build on another;
        None when nothing is to be checked."""
        ...

    def claim(self, table_id: Sequence[str]) -> None:
        """Refuse to start a write of the table that would not build on what the run wrote."""
        ...

    def write_target(
        self, namespace: DirectoryNamespace, table_id: Sequence[str], info: TableInfo
    ) -> TableInfo:
        """Where a write of the existing table `info` (as the model's query read it) goes: the table
        itself, or its branch on a branch target (`branch_landing.py`)."""
        ...

    def reserve(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> tuple[TableInfo | None, bool]:
        """A new table's place before its files are written: the table (None: it gets a location of
        its own when written), and whether this call declared it."""
        ...

    def land(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        read_version: int | None,
        properties: dict[str, str],
        *,
        location: str | None = None,
        staged_tip: StagedCommit | None = None,
    ) -> int:
        """Land `operation`, computed against `read_version` (or against `staged_tip`, the run's
        last staged version of the table); returns the version it makes (or will make).
        `location`: where its data files were written."""
        ...

    def index_target(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> IndexTarget | None:
        """Where the table's index changes are planned and land; None when there is no table."""
        ...

    def adopt_index(
        self, namespace: DirectoryNamespace, target: IndexTarget, index: Index
    ) -> tuple[Index, list[str]]:
        """An index built on `target.dataset`, made ready to land in the table; and its files there."""
        ...

    def land_index(
        self,
        namespace: DirectoryNamespace,
        target: IndexTarget,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        read_version: int,
        properties: dict[str, str],
        files: Sequence[str] = (),
    ) -> int:
        """Land an index change after `read_version`; `files`: what it references that was written
        for it (removed if a run publishes nothing). Returns the version."""
        ...

    def record_view(self, namespace: DirectoryNamespace, view: ViewInfo) -> None:
        """Create or replace the view's namespace record."""
        ...

    def held_view(self, view_id: Sequence[str]) -> ViewInfo | None:
        """The view the run holds back for its publish, if any."""
        ...

    def update_metadata(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        table_metadata: Mapping[str, str | None] | None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None,
        table_name: str,
    ) -> None:
        """Change the table's Lance table and field metadata in one version (None removes a key)."""
        ...

    def when_published(self, table_id: Sequence[str], action: Callable[[], str]) -> str:
        """Run `action` once the table's new version is visible to readers; returns what to log."""
        ...


class DirectLanding:
    """Every change is the table's (or view's) next version, visible as soon as it lands."""

    visible_at_once = True

    def staged_tip(self, table_id: Sequence[str]) -> StagedCommit | None:
        return None

    def read_target(self, table_id: Sequence[str]) -> ReadTarget | None:
        return None

    def staged_dataset(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> lance.LanceDataset | None:
        return None

    def version_read(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> int | None:
        return namespace.describe_table(list(table_id)).version

    def claim(self, table_id: Sequence[str]) -> None:
        return None  # another writer's commit meets the write's pinned version instead (14)

    def write_target(
        self, namespace: DirectoryNamespace, table_id: Sequence[str], info: TableInfo
    ) -> TableInfo:
        return info

    def reserve(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> tuple[TableInfo | None, bool]:
        """Declared at once, which reserves its location; shared when another writer declared it first."""
        try:
            return namespace.declare_table(list(table_id)), True
        except errors.TableAlreadyExistsError:
            return namespace.describe_table(list(table_id)), False

    def land(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        read_version: int | None,
        properties: dict[str, str],
        *,
        location: str | None = None,
        staged_tip: StagedCommit | None = None,
    ) -> int:
        """The engine's commit; `location` is not passed on: the table was declared (or existed)
        before its files were written, so its location is its own."""
        return namespace.commit_table(
            list(table_id), operation, read_version=read_version, transaction_properties=properties or None
        )

    def index_target(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> IndexTarget | None:
        """The table's latest version, in its own directory: the engine's dataset of the described
        version (read only here: plans, uncommitted index builds), which it serves from memory when
        this process opened or committed it."""
        with namespace.consistent_reads():  # "exists?" and the latest version: one catalog check
            if not namespace.table_exists(list(table_id)):
                return None
            info = namespace.describe_table(list(table_id))
        if info.version is None:
            raise errors.TableNotFoundError(f"table {'.'.join(table_id)} has no data")
        dataset = namespace.dataset_at(info.location, info.version)
        location = info.location.rstrip("/")
        return IndexTarget(dataset, location, location, dataset.version, optimizes=True)

    def adopt_index(
        self, namespace: DirectoryNamespace, target: IndexTarget, index: Index
    ) -> tuple[Index, list[str]]:
        return index, []  # built in the table's own directory, on its latest version

    def land_index(
        self,
        namespace: DirectoryNamespace,
        target: IndexTarget,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        read_version: int,
        properties: dict[str, str],
        files: Sequence[str] = (),
    ) -> int:
        return self.land(namespace, table_id, operation, read_version, properties)

    def record_view(self, namespace: DirectoryNamespace, view: ViewInfo) -> None:
        namespace.create_view(
            view.id, view.sql, base_objects=view.base_objects, properties=view.properties, replace=True
        )

    def held_view(self, view_id: Sequence[str]) -> ViewInfo | None:
        return None

    def update_metadata(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        table_metadata: Mapping[str, str | None] | None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None,
        table_name: str,
    ) -> None:
        namespace.update_table_metadata(list(table_id), table_metadata, field_metadata)

    def when_published(self, table_id: Sequence[str], action: Callable[[], str]) -> str:
        return action()  # visible already


DIRECT = DirectLanding()


def latest(namespace: DirectoryNamespace, table_id: Sequence[str]) -> lance.LanceDataset:
    """The table's latest version, for reading (its schema, indexes, tags).

    Opened at the version the describe found, through the engine's session: that version's
    manifest is then in the session's cache, where an open of "latest" would list ``_versions/``
    and read it again (two requests on S3 instead of one)."""
    info = namespace.describe_table(list(table_id))
    return lance.dataset(
        info.location,
        version=info.version,
        storage_options=namespace.storage_options or None,
        session=namespace.lance_session,
    )
