"""The branch operations of ``DirectoryNamespace``: CreateTableBranch, ListTableBranches,
DeleteTableBranch, and DescribeTable at a branch (names, layout and why: ``branches.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import lance
import pyarrow as pa

from dbt.adapters.lancens.namespace import branch_objects, errors, ids, layout
from dbt.adapters.lancens.namespace.branch_objects import BranchObject
from dbt.adapters.lancens.namespace.branches import (
    MAIN,
    branch_info,
    branch_location,
    branch_or_main,
    claimed,
    has_ref,
    require,
    resolve,
    validate_name,
)
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.models import BranchInfo, Page, ResolvedTable, TableInfo
from dbt.adapters.lancens.namespace.table_ops import TableOps


class BranchOps:
    """The branch operations of one namespace, on Lance's branches of the tables it resolves."""

    def __init__(self, context: NamespaceContext, tables: TableOps) -> None:
        self._ctx = context
        self._tables = tables

    def _branches(self, table: ResolvedTable) -> dict[str, BranchInfo]:
        """Every branch of the table, from its refs (none for a declared-only table)."""
        if table.declared_only:
            return {}
        listed = self._ctx.open_dataset(table.location, table.latest).branches.list()
        return {name: branch_info(name, branch) for name, branch in listed.items()}

    def create_table_branch(
        self,
        id: Sequence[str],
        name: str,
        from_version: int | None = None,
        from_branch: str | None = None,
    ) -> BranchInfo:
        """Branch ``name`` of table ``id``, from ``from_version`` (default: the latest) of
        ``from_branch`` (default: main). Zero-copy: a manifest naming the source's files.

        13 for a bad name or argument, 4 for a missing table, 22 for a missing source branch, 11
        for a missing source version (native: 13) or a declared-only table, 23 for a name taken."""
        name = validate_name(name, "name")
        parent = branch_or_main(from_branch, "from_branch")
        if from_version is not None:
            ids.validate_version(from_version, "from_version")
        table = self._tables._resolve_settled(id)
        if table.declared_only:
            raise errors.TableVersionNotFoundError(
                f"table {ids.display(table.id)} is declared only: it has no version to branch from"
            )
        source = table.location if parent is None else require(self._ctx, table, parent)
        try:
            version = self._ctx.open_dataset(source, from_version).version
        except (OSError, ValueError) as exc:
            where = MAIN if parent is None else f"branch {parent!r}"
            if "not found" not in str(exc).lower():
                raise errors.InternalError(
                    f"table {ids.display(table.id)}: cannot open {where}: {exc}"
                ) from exc
            raise errors.TableVersionNotFoundError(
                f"table {ids.display(table.id)} has no version {from_version} on {where}"
            ) from exc
        if has_ref(self._ctx, table.location, name):
            raise errors.TableBranchAlreadyExistsError(
                f"table {ids.display(table.id)} already has branch {name!r}"
            )
        with claimed(self._ctx, table, name):
            return self._create(table, name, parent, version)

    def _create(self, table: ResolvedTable, name: str, parent: str | None, version: int) -> BranchInfo:
        """Lance's creation of branch ``name``, by the holder of its claim (``claimed``)."""
        main = self._ctx.open_dataset(table.location, table.latest)
        try:
            main.create_branch(name, (parent, version), storage_options=self._ctx.lance_options)
        except (OSError, ValueError) as exc:
            # Another writer's creation: its ref, or (before its ref lands: Lance writes the branch's
            # manifest first, conditionally) its manifest, which is what made this one fail.
            target = branch_location(table.location, name)
            if has_ref(self._ctx, table.location, name) or layout.has_versions(self._ctx.fs, target):
                raise errors.TableBranchAlreadyExistsError(
                    f"table {ids.display(table.id)}: branch {name!r} was created concurrently (or a "
                    f"creation was interrupted: {target} holds versions but no ref)"
                ) from exc
            raise errors.InternalError(
                f"table {ids.display(table.id)}: creating branch {name!r} failed: {exc}"
            ) from exc
        return self._branches(table)[name]

    def list_table_branches(
        self, id: Sequence[str], page_token: str | None = None, limit: int | None = None
    ) -> Page:
        """The table's branches (``BranchInfo``), by name bytewise, paged like every listing
        (native ignores ``page_token`` and ``limit`` and answers in hash order). 4 for a missing
        table; a declared-only table has none."""
        ids.validate_page(page_token, limit)
        branches = self._branches(self._ctx.resolve_table(id))
        names, token = ids.paginate(ids.sort_names(branches), page_token, limit)
        return Page([branches[name] for name in names], token)

    def delete_table_branch(self, id: Sequence[str], name: str) -> BranchInfo:
        """Delete branch ``name``: its ref and ``tree/<name>/`` (what only it references). 22 for
        a missing branch; 13, as native, while branches created from it live (their manifests name
        its files), naming them; 13 (native deletes it) while a kept version of main or of another
        branch reads files it wrote through a base path (a promoted branch, ``metadata/promotion.py``),
        naming those versions (``readers_of_branch``)."""
        name = validate_name(name, "name")
        table = self._ctx.resolve_table(id)
        branches = self._branches(table)
        if name not in branches:
            raise errors.TableBranchNotFoundError(f"table {ids.display(table.id)} has no branch {name!r}")
        children = [child for child, info in branches.items() if info.parent_branch == name]
        if children:
            raise errors.InvalidInputError(
                f"table {ids.display(table.id)}: branch {name!r} cannot be deleted while branches created "
                f"from it live ({', '.join(ids.sort_names(children))}); delete those first"
            )
        readers = self._readers(table, name, branches)
        if readers:
            raise errors.InvalidInputError(
                f"table {ids.display(table.id)}: branch {name!r} was promoted and {'; '.join(readers)} "
                f"read files it wrote ({branch_location(table.location, name)}); deleting it would lose "
                "their rows, so it is kept. Once main has a later version that does not read them (a "
                "rebuild or overwrite), remove those versions with a cleanup (lancens.cleanup with "
                "retain_versions) and delete the branch then"
            )
        main = self._ctx.open_dataset(table.location, table.latest)
        try:
            main.branches.delete(name)
        except (OSError, ValueError) as exc:
            if not has_ref(self._ctx, table.location, name):
                raise errors.TableBranchNotFoundError(
                    f"table {ids.display(table.id)}: branch {name!r} was deleted concurrently"
                ) from exc
            raise errors.InvalidInputError(
                f"table {ids.display(table.id)}: branch {name!r} cannot be deleted: {exc}"
            ) from exc
        return branches[name]

    def readers_of_branch(self, id: Sequence[str], name: str) -> list[str]:
        """The kept versions, of main and of the table's other branches, that read a file branch
        ``name`` wrote (``"main versions 3, 4"``, ``"branch 'x' versions 7"``); empty when none does,
        so deleting the branch loses no row anyone can read. 4 for a missing table."""
        table = self._ctx.resolve_table(id)
        return self._readers(table, validate_name(name, "name"), self._branches(table))

    def _readers(self, table: ResolvedTable, name: str, branches: dict[str, BranchInfo]) -> list[str]:
        """``readers_of_branch`` for a resolved table. A promotion makes main read the branch's files
        through a base path naming ``tree/<name>/`` (which later manifests keep even when no fragment
        uses it), so each kept version's fragments are read: a data or deletion file through that
        base path is a reader. Every version Lance lists is checked (tagged ones included), newest
        first per line of versions; an unreadable one counts as a reader (what it reads is unknown)."""
        if table.declared_only:
            return []
        own = branch_location(table.location, name)
        lines = [(MAIN, table.location)] + [
            (other, branch_location(table.location, other))
            for other in ids.sort_names(branches)
            if other != name
        ]
        found = []
        for label, location in lines:
            latest = self._ctx.open_dataset(location, table.latest if label == MAIN else None)
            if not any(_same(base.path, own) for base in latest.base_paths().values()):
                continue  # none of its versions does: Lance keeps a base path in every later manifest
            reading = [
                entry["version"]
                for entry in latest.versions()
                if self._reads(location, entry["version"], own)
            ]
            if reading:
                where = "main" if label == MAIN else f"branch {label!r}"
                found.append(f"{where} versions {', '.join(str(v) for v in sorted(reading))}")
        return found

    def _reads(self, location: str, version: int, own: str) -> bool:
        """Whether ``version`` at ``location`` has a data or deletion file under directory ``own``."""
        try:
            dataset = self._ctx.open_dataset(location, version)
        except (OSError, ValueError):
            return True  # removed meanwhile or unreadable: what it reads is unknown
        keys = {key for key, base in dataset.base_paths().items() if _same(base.path, own)}
        if not keys:
            return False
        for fragment in dataset.get_fragments():
            metadata = fragment.metadata
            deletion = metadata.deletion_file
            if any(f.base_id in keys for f in metadata.files) or (
                deletion is not None and deletion.base_id in keys
            ):
                return True
        return False

    def describe_table(self, id: Sequence[str], name: str, version: int | None = None) -> TableInfo:
        """The table as of ``version`` (default: the latest) of branch ``name``; ``location`` is the
        branch's dataset directory, so whatever opens a table by location (pylance, the Spark data
        source, ``dataset_at``) reads the branch. ``main`` is the table itself. 22 for a missing
        branch, 11 for a missing version (native ignores the branch)."""
        branch = branch_or_main(name)
        if branch is None:
            return self._tables.describe_table(id, version)
        if version is not None:
            ids.validate_version(version)
        table = resolve(self._ctx, ids.validate(id, what="table", allow_root=False), branch)
        at_branch = ResolvedTable(table.id, require(self._ctx, table, branch), table.in_manifest, False)
        try:
            info = self._tables._table_info(at_branch, version)
        except errors.TableVersionNotFoundError:
            raise errors.TableVersionNotFoundError(
                f"branch {branch!r} of table {ids.display(table.id)} has no version {version}"
            ) from None
        return replace(info, branch=branch)

    # -- objects only a branch has (branch_objects.py) ---------------------------------------------
    def _require_parent(self, namespace_id: list[str], name: str) -> None:
        """1 unless namespace ``namespace_id`` exists on main or on branch ``name``."""
        if not namespace_id or self._ctx_namespace_exists(namespace_id):
            return
        item = branch_objects.find(self._ctx, name, namespace_id)
        if item is None or item.kind != "namespace":
            raise errors.NamespaceNotFoundError(
                f"namespace {ids.display(namespace_id)} exists neither on main nor on branch {name!r}"
            )

    def _ctx_namespace_exists(self, namespace_id: list[str]) -> bool:
        try:
            self._ctx.require_namespace(namespace_id)
        except errors.NamespaceNotFoundError:
            return False
        return True

    def create_namespace_on_branch(self, id: Sequence[str], name: str) -> bool:
        """Namespace ``id`` on branch ``name`` only (main gets it when the branch is promoted);
        False when main has it already. 1 for a parent neither has, 13 for a bad name or id."""
        name = validate_name(name, "branch")
        namespace_id = ids.validate(id, what="namespace", allow_root=False)
        if self._ctx_namespace_exists(namespace_id):
            return False
        self._require_parent(namespace_id[:-1], name)
        branch_objects.record(self._ctx, name, namespace_id, "namespace")
        return True

    def create_table_on_branch(
        self, id: Sequence[str], name: str, schema: pa.Schema, location: str
    ) -> TableInfo:
        """Table ``id``, which main does not have, on branch ``name`` only: ``location`` is the
        branch's directory (``<table directory>/tree/<name>``) where its first write's files went.
        The table directory gets main's one empty version of ``schema`` and the branch from it; the
        record (``branch_objects``) makes the engine resolve the table on the branch. Finishes a
        creation a killed writer left. 5 when main has the table, 1 for a namespace neither has,
        14 when another writer made it on the branch elsewhere, 13 for a ``location`` that is no
        branch directory."""
        name = validate_name(name, "branch")
        table_id = ids.validate(id, what="table", allow_root=False)
        suffix = f"/{layout.BRANCH_TREE_DIR}/{name}"
        if not location.rstrip("/").endswith(suffix):
            raise errors.InvalidInputError(f"location {location} is not a directory of branch {name!r}")
        directory = location.rstrip("/")[: -len(suffix)]
        if self._ctx.table_exists(table_id):
            raise errors.TableAlreadyExistsError(
                f"table {ids.display(table_id)} exists on main: branch {name!r} builds on main's"
            )
        self._require_parent(table_id[:-1], name)
        item = branch_objects.record(self._ctx, name, table_id, "table", directory)
        if item.location is None or item.location.rstrip("/") != directory:
            raise errors.ConcurrentModificationError(
                f"table {ids.display(table_id)} was made on branch {name!r} by another writer meanwhile "
                f"(at {item.location}); nothing of this write was committed: run it again"
            )
        if not layout.has_versions(self._ctx.fs, directory):
            empty = lance.LanceOperation.Overwrite(schema, [])
            try:
                lance.LanceDataset.commit(directory, empty, storage_options=self._ctx.lance_options)
            except OSError:
                if not layout.has_versions(self._ctx.fs, directory):
                    raise  # else another writer of the record made it
        table = ResolvedTable(table_id, directory, False, False)
        if not has_ref(self._ctx, directory, name):
            try:
                with claimed(self._ctx, table, name):
                    self._create(table, name, None, 1)
            except errors.TableBranchAlreadyExistsError:
                pass  # the record's other writer made it: build on it
        return self.describe_table(table_id, name)

    def table_location_on_branch(self, id: Sequence[str], name: str) -> str:
        """Where a write of table ``id``, which main does not have, puts its files on branch
        ``name``: the branch directory of the table's directory (recorded by a killed creation, else
        a new one), for ``create_table_on_branch``."""
        name = validate_name(name, "branch")
        table_id = ids.validate(id, what="table", allow_root=False)
        item = branch_objects.find(self._ctx, name, table_id)
        directory = item.location if item is not None and item.location else self._ctx.new_location(table_id)
        return branch_location(directory, name)

    def promotion_rows(self, name: str) -> list[dict[str, object]]:
        """The ``__manifest`` rows that register on main what only branch ``name`` has: its
        namespaces main lacks, parents first, then its tables at their directories."""
        rows: list[dict[str, object]] = []
        for item in self.objects_on_branch(name):
            if item.kind == "namespace":
                if not self._ctx_namespace_exists(item.id):
                    rows.append(
                        {
                            "object_id": ids.object_id(item.id),
                            "object_type": "namespace",
                            "location": None,
                            "metadata": None,
                        }
                    )
            elif item.location is not None and not self._ctx.table_exists(item.id):
                rows.append(
                    {
                        "object_id": ids.object_id(item.id),
                        "object_type": "table",
                        "location": layout.relative_location(self._ctx.fs, item.location),
                        "metadata": None,
                        "base_objects": None,
                    }
                )
        return rows

    def branches_with_objects(self) -> list[str]:
        """The branches that have tables or namespaces main does not."""
        return branch_objects.branch_names(self._ctx)

    def objects_on_branch(self, name: str) -> list[BranchObject]:
        """What only branch ``name`` has: namespaces (parents first), then tables."""
        return branch_objects.listed(self._ctx, validate_name(name, "branch"))

    def forget_on_branch(self, item: BranchObject, drop: bool) -> None:
        """Forget ``item``'s record: promoted (main has it now), or ``drop``: deleted with its directory."""
        if drop and item.location is not None:
            self._ctx.fs.rm_tree(item.location)
        branch_objects.forget(self._ctx, item)


def _same(path: str, location: str) -> bool:
    return path.rstrip("/") == location.rstrip("/")
