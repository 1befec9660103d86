"""The landing of a branch target (profile key `branch:`): every write of the run lands on that Lance
branch of its table, and main never changes.

A table's branch is made at the table's first write (`write_target`, called by `open_write` before
any data file is written), zero-copy from the main version the model's query read; its files are
written in the branch's own directory (`<table>/tree/<branch>/`) and committed there
(`commit_table(..., branch=)`). Reads follow the same rule everywhere (`read_target`, used by the
runtime's one catalog refresh): a table that has the branch is read on it, every other table on
main, so a branch holds only what the target built, as dbt's defer reads unbuilt models elsewhere.

A table or schema main does not have is made on the branch only (the engine's `branch_objects.py`:
a table directory of its own, unregistered, with an empty main version and the rows on the branch),
so main's catalog never lists it before `lancens.promote_branch` registers it.

What cannot live on a branch is kept in the run, never written to main: a view's
namespace record (a view has no branches: Spark's session gets it, later models and tests of the
run read it, main's record is untouched); `lance_maintenance` (it would rewrite main's files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.branches import validate_name
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.models import ObjectEntry, TableInfo, ViewInfo
from dbt.adapters.lancens.namespace.table_ops import metadata_update
from dbt.adapters.lancens.runtime.landing import DirectLanding, IndexTarget, ReadTarget


class BranchLanding(DirectLanding):
    """Commits at once, like `DirectLanding`, but on branch `name` of each table."""

    def __init__(self, namespace: DirectoryNamespace, name: str) -> None:
        self.namespace = namespace
        self.name = validate_name(name, "profile key `branch`")

    def branch_of(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> TableInfo | None:
        """The table on this branch, at its latest version; None when the table has no such branch
        (or does not exist)."""
        try:
            return namespace.describe_table(list(table_id), branch=self.name)
        except (errors.TableBranchNotFoundError, errors.TableNotFoundError, errors.NamespaceNotFoundError):
            return None

    def write_target(
        self, namespace: DirectoryNamespace, table_id: Sequence[str], info: TableInfo
    ) -> TableInfo:
        """The table's branch, made from `info` (main, as the model's query read it) when missing.

        Created from `info.version`, not main's latest: the branch's first version then has that
        number, so the moved-while-read guard compares what the query read with what the write
        builds on. A creation that loses a race to this run's other thread is 23: the branch exists."""
        if info.branch is not None:
            return info
        existing = self.branch_of(namespace, table_id)
        if existing is not None:
            return existing
        try:
            namespace.create_table_branch(list(table_id), self.name, from_version=info.version)
        except errors.TableBranchAlreadyExistsError:
            pass  # made meanwhile by another writer of this target: build on it
        return namespace.describe_table(list(table_id), branch=self.name)

    def catalog_entry(self, namespace: DirectoryNamespace, entry: ObjectEntry) -> ObjectEntry:
        """A table's catalog entry (`dbt docs generate`) at the branch's location when the table has
        the branch, so the docs show what the target built."""
        info = self.branch_of(namespace, entry.id)
        return entry if info is None else replace(entry, location=info.location)

    def read_target(self, table_id: Sequence[str]) -> ReadTarget | None:
        """The branch, at its latest version (pinned: Spark's `INSERT` into a catalog entry would
        commit to main, so the branch's entries take none; every write here refreshes the entry)."""
        info = self.branch_of(self.namespace, table_id)
        return None if info is None else ReadTarget(info.location, info.version)

    def staged_dataset(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> lance.LanceDataset | None:
        """The branch's latest version: what the target's columns and descriptions are read from."""
        info = self.branch_of(namespace, table_id)
        return (
            None
            if info is None or info.version is None
            else namespace.dataset_at(info.location, info.version)
        )

    def version_read(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> int | None:
        """The branch's version, or main's before the branch exists (the branch will start at it)."""
        info = self.branch_of(namespace, table_id)
        if info is not None:
            return info.version
        try:
            return namespace.describe_table(list(table_id)).version
        except (errors.TableNotFoundError, errors.NamespaceNotFoundError):
            return None  # new on the branch: there is nothing a query could have read

    def reserve(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> tuple[TableInfo | None, bool]:
        """A table main does not have is made on the branch only (`branch_objects.py` in the engine):
        the one this target made already, else a place in the branch's directory of a new table
        directory, which `land` creates with the write's first commit. Nothing is declared on main."""
        made = self.branch_of(namespace, table_id)
        if made is not None:
            return made, False
        location = namespace.table_location_on_branch(list(table_id), self.name)
        new = TableInfo(list(table_id), table_id[-1], list(table_id[:-1]), location, None, None, {}, True)
        return replace(new, branch=self.name), False

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
        """The engine's commit on the branch; `location` (where the files were written) must be the
        branch's own (13 otherwise: files written to main's directory would be lost to the branch).
        A table neither main nor the branch has is created on the branch first, from the schema of
        its first write (an `Overwrite`), so main's catalog never lists it."""
        if self.branch_of(namespace, table_id) is None:
            if not isinstance(operation, lance.LanceOperation.Overwrite) or location is None:
                raise errors.InvalidInputError(
                    f"table {'.'.join(table_id)} does not exist on branch {self.name!r}: its first "
                    "write must create it (a full build), not change it"
                )
            namespace.create_table_on_branch(list(table_id), self.name, operation.new_schema, location)
            read_version = 1  # the branch's first version: main's empty one
        return namespace.commit_table(
            list(table_id),
            operation,
            read_version=read_version,
            transaction_properties=properties or None,
            location=location,
            branch=self.name,
        )

    def index_target(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> IndexTarget | None:
        """The branch's latest version, in the branch's directory; None when the target did not
        build the table (its indexes are main's)."""
        info = self.branch_of(namespace, table_id)
        if info is None or info.version is None:
            return None
        dataset = namespace.dataset_at(info.location, info.version)
        location = info.location.rstrip("/")
        return IndexTarget(dataset, location, location, dataset.version, optimizes=False)

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
        return self.land(namespace, table_id, operation, read_version, properties, location=target.location)

    def record_view(self, namespace: DirectoryNamespace, view: ViewInfo) -> None:
        return None  # Spark's session has the view already; main's record stays as it is

    def update_metadata(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        table_metadata: Mapping[str, str | None] | None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None,
        table_name: str,
    ) -> None:
        """On the branch (one `UpdateConfig` version of it); a table the target did not build keeps
        main's descriptions."""
        info = self.branch_of(namespace, table_id)
        if info is None or info.version is None:
            return
        dataset = namespace.dataset_at(info.location, info.version)
        operation = metadata_update(dataset, table_metadata, field_metadata, table_name)
        self.land(namespace, table_id, operation, info.version, {}, location=info.location)

    def create_schema(self, namespace: DirectoryNamespace, namespace_id: Sequence[str]) -> None:
        """A schema (and its missing parents) the target needs: on the branch only when main lacks
        it (`lancens.promote_branch` creates it on main)."""
        for depth in range(1, len(namespace_id) + 1):
            namespace.create_namespace_on_branch(list(namespace_id[:depth]), self.name)

    def schemas_only_here(self, namespace: DirectoryNamespace) -> list[list[str]]:
        """The namespaces only this branch has (made by `create_schema`), so dbt's `list_schemas`
        and `check_schema_exists` on the branch target find them and do not create them again."""
        return [list(item.id) for item in namespace.objects_on_branch(self.name) if item.kind == "namespace"]

    def tables_only_here(self, namespace: DirectoryNamespace, namespace_id: Sequence[str]) -> list[str]:
        """The names of the tables directly in `namespace_id` that only this branch has."""
        return [
            item.id[-1]
            for item in namespace.objects_on_branch(self.name)
            if item.kind == "table"
            and item.id[:-1] == list(namespace_id)
            and self.branch_of(namespace, item.id) is not None
        ]

    def catalog_entries(self, namespace: DirectoryNamespace) -> list[ObjectEntry]:
        """The catalog entries (`dbt docs generate`) of the tables only this branch has."""
        entries = []
        for item in namespace.objects_on_branch(self.name):
            info = self.branch_of(namespace, item.id) if item.kind == "table" else None
            if info is not None:
                entries.append(ObjectEntry(list(item.id), "table", info.location))
        return entries

    def refuse(self, action: str) -> None:
        """Refuse `action`, which changes main's objects themselves (a drop, a rename, a clone):
        a branch target must leave main as it is until a promotion (13)."""
        raise errors.InvalidInputError(
            f"{action} is refused: it would change main, and this target builds on branch {self.name!r} "
            "(main changes only by lancens.promote_branch); run it on a target without `branch:`"
        )

    def when_published(self, table_id: Sequence[str], action: Callable[[], str]) -> str:
        return f"skipped: optimize and cleanup run on main, and this target builds on branch {self.name!r}"
