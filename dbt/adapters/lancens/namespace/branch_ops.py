"""The branch operations of ``DirectoryNamespace``: CreateTableBranch, ListTableBranches,
DeleteTableBranch, and DescribeTable at a branch (names, layout and why: ``branches.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dbt.adapters.lancens.namespace import errors, ids, layout
from dbt.adapters.lancens.namespace.branches import (
    MAIN,
    branch_info,
    branch_location,
    branch_or_main,
    claimed,
    has_ref,
    require,
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
        its files), naming them."""
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
        try:
            self._ctx.open_dataset(table.location, table.latest).branches.delete(name)
        except (OSError, ValueError) as exc:
            if not has_ref(self._ctx, table.location, name):
                raise errors.TableBranchNotFoundError(
                    f"table {ids.display(table.id)}: branch {name!r} was deleted concurrently"
                ) from exc
            raise errors.InvalidInputError(
                f"table {ids.display(table.id)}: branch {name!r} cannot be deleted: {exc}"
            ) from exc
        return branches[name]

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
        table = self._ctx.resolve_table(id)
        at_branch = ResolvedTable(table.id, require(self._ctx, table, branch), table.in_manifest, False)
        try:
            info = self._tables._table_info(at_branch, version)
        except errors.TableVersionNotFoundError:
            raise errors.TableVersionNotFoundError(
                f"branch {branch!r} of table {ids.display(table.id)} has no version {version}"
            ) from None
        return replace(info, branch=branch)
