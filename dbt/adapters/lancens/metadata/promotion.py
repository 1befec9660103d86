"""Promoting a branch to main (`lancens.promote_branch`): every table the branch changed becomes
main's next version with the branch's contents, and no data file is written or copied.

Lance has no merge, so the rule is the simplest honest one: a table whose main moved after the
branch was made (or whose branch was made from another branch) is refused, naming every such
table, before anything is written; promote after rebuilding the branch from main's new versions.

How a table is promoted: main's new version is one Lance commit of the branch's latest fragments
(`Merge`, `Update` or `Overwrite`, whichever takes the branch's change as it is: `_kind`). The
branch's manifest names main's directory as a base path (the files it inherited) and its own
directory for what it wrote; on main the former are main's own files again and the latter are read
through a base path main registers for the branch's directory (`add_bases`, a version of its own
with main's rows unchanged, made before the promotion's commit). The branch therefore stays: main
reads its files (`branch_files_in_use`): `lancens.delete_branch` refuses it until no kept version
of main reads them (main moved on and a cleanup removed the versions that did).

A table or namespace only the branch has (made by a branch target: the engine's `branch_objects.py`)
is registered on main by the same catalog commit: the table's own directory, which no catalog lists
yet, first gets main's version with the branch's fragments (a plain Lance commit there, invisible),
and its row, and the namespaces' rows, are inserted with the other tables' versions
(`DirectoryNamespace.publish_branch`). No data file is copied for them either.

With table version management all tables land in ONE `__manifest` commit (the engine's staged
commits and `publish`, the atomic-publish machinery), so a reader of main sees all of the promotion
or none of it. Without it a promotion must be one visible step (one existing table's commit, or
the one catalog commit that registers new objects); anything more is refused naming the config.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import lance
from lance.dataset import DatasetBasePath
from lance.fragment import DataFile, DeletionFile, FragmentMetadata

from dbt.adapters.lancens.metadata.engine_dataset import open_for_commits
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages, errors
from dbt.adapters.lancens.namespace.branches import branch_info, validate_name
from dbt.adapters.lancens.namespace.models import BranchInfo, TableInfo


@dataclass(frozen=True)
class BranchedTable:
    """A table that has the branch: main's latest, the branch's latest and Lance's record of it."""

    id: list[str]
    main: TableInfo
    branch: TableInfo
    record: BranchInfo
    # a table only the branch has (the engine's `branch_objects.py`): main's side is its own
    # unregistered directory, which the promotion registers in main's catalog
    new: bool = False

    @property
    def main_version(self) -> int:
        return _version(self.main)

    @property
    def branch_version(self) -> int:
        return _version(self.branch)

    @property
    def name(self) -> str:
        return ".".join(self.id)

    @property
    def changed(self) -> bool:
        """Whether the branch has commits of its own (its first version has its source's number)."""
        return self.branch.version != self.record.parent_version


def main_moved(namespace: DirectoryNamespace, table: BranchedTable) -> bool:
    """Whether main's content changed after the branch was made (or the branch was made from another
    branch). Main's later versions that changed no row are not a move: they are base paths an earlier,
    interrupted promotion of this branch registered, which a new attempt must be able to go past."""
    if table.record.parent_branch is not None:
        return True
    if table.new:  # its directory's main is written by promotions only; main's catalog must lack it
        return namespace.table_exists(table.id)
    if table.main_version == table.record.parent_version:
        return False
    now = namespace.dataset_at(table.main.location, table.main_version)
    then = namespace.dataset_at(table.main.location, table.record.parent_version)
    return now.schema != then.schema or _fragments(now) != _fragments(then)


def _fragments(dataset: lance.LanceDataset) -> list[FragmentMetadata]:
    return [fragment.metadata for fragment in dataset.get_fragments()]


def _version(info: TableInfo) -> int:
    """A branched table's version (a declared-only table has no branch, so there is one)."""
    if info.version is None:
        raise errors.TableVersionNotFoundError(f"table {'.'.join(info.id)} has no version")
    return info.version


def branched_tables(namespace: DirectoryNamespace, name: str) -> list[BranchedTable]:
    """Every table of the root that has branch `name` (13 for a bad name), those only the branch
    has included."""
    validate_name(name, "branch")
    found = []
    for entry in namespace.list_objects():
        if entry.object_type != "table":
            continue
        try:
            branch = namespace.describe_table(entry.id, branch=name)
        except (errors.TableBranchNotFoundError, errors.TableNotFoundError):
            continue
        record = next(b for b in all_pages(namespace.list_table_branches, entry.id) if b.name == name)
        found.append(BranchedTable(list(entry.id), namespace.describe_table(entry.id), branch, record))
    registered = {tuple(table.id): table.main.location.rstrip("/") for table in found}
    for item in namespace.objects_on_branch(name):
        if item.kind != "table" or item.location is None:
            continue
        if registered.get(tuple(item.id)) == item.location.rstrip("/"):
            namespace.forget_on_branch(item)  # promoted already (a promotion killed before forgetting)
            continue
        try:
            branch = namespace.describe_table(item.id, branch=name)
        except (errors.TableBranchNotFoundError, errors.TableNotFoundError, errors.NamespaceNotFoundError):
            continue  # its creation was killed before the branch existed: nothing to promote
        main = lance.dataset(item.location, storage_options=namespace.storage_options or None)
        main_info = replace(branch, location=item.location, version=main.version, branch=None)
        record = branch_info(name, main.branches.list()[name])
        found.append(BranchedTable(list(item.id), main_info, branch, record, new=True))
    return found


def promote(namespace: DirectoryNamespace, name: str, properties: dict[str, str]) -> dict[str, int]:
    """Make every table branch `name` changed main's next version with the branch's rows; returns
    table -> main's new version. 4 when no table has the branch; 14 naming the tables whose main
    moved since the branch was made (nothing is written then)."""
    tables = branched_tables(namespace, name)
    if not tables and not namespace.objects_on_branch(name):
        raise errors.TableNotFoundError(f"no table has branch {name!r}: nothing to promote")
    changed = [table for table in tables if table.changed]
    moved = [table for table in changed if main_moved(namespace, table)]
    if moved:
        listed = ", ".join(
            f"{t.name} (branched from {t.record.parent_branch or 'main'} version {t.record.parent_version}, "
            f"main now at {t.main.version})"
            for t in moved
        )
        raise errors.ConcurrentModificationError(
            f"branch {name!r} cannot be promoted: main moved after the branch was made for {listed}; "
            "nothing was promoted (Lance has no merge): rebuild the branch from main's new versions "
            "(a new branch name) and promote that"
        )
    _refuse_unless_atomic(namespace, name, changed)
    operations = [(table, _promotion(namespace, table, properties)) for table in changed if not table.new]
    for table in changed:  # committed in their own, unregistered directories: invisible until
        if table.new:  # the catalog commit below registers them
            _commit_new(namespace, table, properties)
    if namespace.version_management_enabled():
        staged = [
            namespace.stage_table_commit(table.id, operation, read_version, transaction_properties=properties)
            for table, (operation, read_version) in operations
        ]
        published = namespace.publish_branch(name, staged)
    else:
        published = {
            tuple(table.id): namespace.commit_table(
                table.id, operation, read_version, transaction_properties=properties
            )
            for table, (operation, read_version) in operations
        }
        if namespace.objects_on_branch(name):
            namespace.publish_branch(name)  # the new objects' rows: one catalog commit
    for table in changed:
        if table.new:
            published[tuple(table.id)] = _version(namespace.describe_table(table.id))
    for item in namespace.objects_on_branch(name):
        namespace.forget_on_branch(item)  # main has them now
    return {".".join(key): version for key, version in published.items()}


def _refuse_unless_atomic(namespace: DirectoryNamespace, name: str, changed: list[BranchedTable]) -> None:
    """Without table version management a promotion is atomic only when it is one visible step: one
    existing table's commit, or the one catalog commit that registers the new objects. More than that
    is refused (13) before anything is written, naming the tables and the config that makes it one."""
    if namespace.version_management_enabled():
        return
    existing = [table.name for table in changed if not table.new]
    new = [".".join(item.id) for item in namespace.objects_on_branch(name)]
    if len(existing) + (1 if new else 0) <= 1:
        return
    raise errors.InvalidInputError(
        f"branch {name!r} cannot be promoted atomically on this root: it changed "
        f"{', '.join(existing + new)}, and without table version management each table becomes main's "
        "one after another; set `table_version_management: true` in the profile (it turns table version "
        "management on for the root) and promote again; nothing was promoted"
    )


def _commit_new(namespace: DirectoryNamespace, table: BranchedTable, properties: dict[str, str]) -> None:
    """Main's version of a table only the branch had, in its own directory, which no catalog lists
    yet: a plain Lance commit there (unless a killed promotion made it already)."""
    location = table.main.location.rstrip("/")
    options = namespace.storage_options or None
    branch = namespace.dataset_at(table.branch.location, table.branch_version)
    main = lance.dataset(location, storage_options=options)
    if main.version > table.record.parent_version and main.schema == branch.schema:
        if [f.metadata.id for f in main.get_fragments()] == [f.metadata.id for f in branch.get_fragments()]:
            return
    if any(_reads_own_files(fragment) for fragment in _fragments(branch)):
        own = table.branch.location.rstrip("/")
        if not any(_same(base.path, own) for base in main.base_paths().values()):
            main.add_bases([DatasetBasePath(own, name=f"branch {table.branch.branch}", is_dataset_root=True)])
            main = lance.dataset(location, storage_options=options)
    key = next((k for k, base in main.base_paths().items() if _same(base.path, table.branch.location)), None)
    inherited = {k for k, base in branch.base_paths().items() if _same(base.path, location)}
    remapped = [
        _remapped(fragment, lambda base: key if base is None else None if base in inherited else base)
        for fragment in _fragments(branch)
    ]
    operation = _operation(_kind(main, branch, table.name), main, branch, remapped)
    transaction = lance.Transaction(main.version, operation, transaction_properties=properties)
    lance.LanceDataset.commit(location, transaction, storage_options=options)


def _promotion(
    namespace: DirectoryNamespace, table: BranchedTable, properties: dict[str, str]
) -> tuple[lance.LanceOperation.BaseOperation, int]:
    """The operation that makes main hold the branch's fragments, and the main version it builds on
    (after registering the branch's directory as a base path of main, when the branch wrote files)."""
    main_location = table.main.location.rstrip("/")
    own = table.branch.location.rstrip("/")
    branch = namespace.dataset_at(table.branch.location, table.branch_version)
    main_dataset = namespace.dataset_at(table.main.location, table.main_version)
    kind = _kind(main_dataset, branch, table.name)  # refused before main gets a base path
    inherited = {key for key, base in branch.base_paths().items() if _same(base.path, main_location)}
    fragments = _fragments(branch)
    read_version = table.main_version
    base_id = None
    if any(_reads_own_files(fragment) for fragment in fragments):
        base_id, read_version = _branch_base(namespace, table, own, properties)

    def on_main(base: int | None) -> int | None:
        if base is None:
            return base_id
        if base in inherited:
            return None
        raise errors.InvalidInputError(
            f"table {table.name}: branch {table.branch.branch!r} reads files of base path {base}, which is "
            "neither main's directory nor its own; it cannot be promoted"
        )

    remapped = [_remapped(fragment, on_main) for fragment in fragments]
    return _operation(kind, main_dataset, branch, remapped), read_version


def _kind(main: lance.LanceDataset, branch: lance.LanceDataset, name: str) -> str:
    """Which Lance operation replaces main's fragments with the branch's without rewriting a file.

    `Merge` (any schema change) must keep every fragment main has; `Update` (removed, changed and
    new fragments) keeps the schema; `Overwrite` (fresh fragment ids) takes no deletion files. A
    branch that both dropped main's fragments and changed the schema while deleting rows fits none:
    13, naming the table."""
    main_ids = {fragment.fragment_id for fragment in main.get_fragments()}
    branch_fragments = [fragment.metadata for fragment in branch.get_fragments()]
    if main_ids <= {fragment.id for fragment in branch_fragments}:
        return "merge"
    if branch.schema == main.schema:
        return "update"
    if all(fragment.deletion_file is None for fragment in branch_fragments):
        return "overwrite"
    raise errors.InvalidInputError(
        f"table {name}: the branch changed the schema, dropped fragments of main and deleted rows; no "
        "Lance operation promotes that without rewriting data: rebuild the table on the branch "
        "(a full refresh) and promote again"
    )


def _operation(
    kind: str, main: lance.LanceDataset, branch: lance.LanceDataset, fragments: list[FragmentMetadata]
) -> lance.LanceOperation.BaseOperation:
    """The `_kind` operation with `fragments` (the branch's, as main names their files)."""
    if kind == "merge":
        return lance.LanceOperation.Merge(fragments, branch.lance_schema)
    if kind == "overwrite":
        return lance.LanceOperation.Overwrite(branch.schema, fragments)
    main_ids = {fragment.fragment_id for fragment in main.get_fragments()}
    return lance.LanceOperation.Update(
        removed_fragment_ids=sorted(main_ids - {fragment.id for fragment in fragments}),
        updated_fragments=[fragment for fragment in fragments if fragment.id in main_ids],
        new_fragments=[fragment for fragment in fragments if fragment.id not in main_ids],
    )


def _reads_own_files(fragment: FragmentMetadata) -> bool:
    """Whether `fragment` has a file the branch wrote (no base path: the branch's own directory)."""
    files: list[DataFile | DeletionFile] = list(fragment.files)
    if fragment.deletion_file is not None:
        files.append(fragment.deletion_file)
    return any(f.base_id is None for f in files)


def _branch_base(
    namespace: DirectoryNamespace, table: BranchedTable, own: str, properties: dict[str, str]
) -> tuple[int, int]:
    """Main's base path for the branch's directory (registered now unless it is already), and main's
    version after it."""
    main = open_for_commits(namespace, table.id, properties)
    for key, base in main.base_paths().items():
        if _same(base.path, own):
            return key, main.version
    main.add_bases([DatasetBasePath(own, name=f"branch {table.branch.branch}", is_dataset_root=True)])
    after = namespace.describe_table(table.id)
    reopened = namespace.dataset_at(after.location, _version(after))
    key = next(key for key, base in reopened.base_paths().items() if _same(base.path, own))
    return key, _version(after)


def _remapped(fragment: FragmentMetadata, on_main: Callable[[int | None], int | None]) -> FragmentMetadata:
    """`fragment` with each file's base path as main names it."""
    files = [
        DataFile(
            f.path,
            f.fields,
            f.column_indices,
            f.file_major_version,
            f.file_minor_version,
            f.file_size_bytes,
            on_main(f.base_id),
        )
        for f in fragment.files
    ]
    deletion = fragment.deletion_file
    if deletion is not None:
        deletion = DeletionFile(
            deletion.read_version,
            deletion.id,
            deletion.file_type,
            deletion.num_deleted_rows,
            on_main(deletion.base_id),
        )
    return FragmentMetadata(fragment.id, files, fragment.physical_rows, deletion, fragment.row_id_meta)


def _same(path: str, location: str) -> bool:
    return path.rstrip("/") == location.rstrip("/")


def branch_files_in_use(namespace: DirectoryNamespace, table_id: Sequence[str], name: str) -> list[str]:
    """The kept versions (main's, other branches') that read files branch `name` wrote, as the
    engine names them (`readers_of_branch`); empty once main moved on and a cleanup removed them."""
    return namespace.readers_of_branch(list(table_id), name)
