"""Table branches: their names, where one lives, and where a commit to one lands (the operations,
CreateTableBranch, ListTableBranches, DeleteTableBranch and DescribeTable at a branch, are in
``branch_ops.py``; ``commit.py`` imports this module, which therefore knows no ``TableOps``).

A branch is Lance's own (pylance ``LanceDataset.create_branch``), exactly what pylance's native
``DirectoryNamespace`` makes, so pylance, LanceDB, lance-spark and native open the same branch by
name: ``_refs/branches/<percent-encoded name>.json`` records it (parent branch and version, creation
time), and ``tree/<name>/`` under the table's directory is a Lance dataset of its own whose
manifest names the table's directory as base path 0. Creating one writes that manifest, its
transaction file and the ref, never a data file; a branch's own commits write under ``tree/<name>/``.
Native writes no ``__manifest`` row for a branch, and neither does this engine: the table's row
covers its branches (a drop deletes them with the directory).

Names follow Lance's rules (checked here first, so a bad name is 13 naming the argument, where
Lance's own refusals are an OSError or, for a too-long name, an internal error): ``main`` is the
default branch and cannot be created or deleted; ``/`` separates segments of alphanumerics, ``.``,
``-`` and ``_``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from dbt.adapters.lancens.namespace import branch_objects, errors, ids, layout
from dbt.adapters.lancens.namespace.branch_objects import ENGINE_DIR
from dbt.adapters.lancens.namespace.context import NamespaceContext
from dbt.adapters.lancens.namespace.models import BranchInfo, ResolvedTable

MAIN = "main"
# One path component on every store we run on; the ref file, `<percent-encoded name>.json`, is the
# longest component a branch makes (Lance itself fails with an internal error past it).
_MAX_COMPONENT_BYTES = 255
_REF_SUFFIX = ".json"


def validate_name(name: object, argument: str, main_allowed: bool = False) -> str:
    """A branch name as Lance accepts it, else 13 naming ``argument`` and the rule broken.

    ``main_allowed``: the default branch may be named (a source to branch from, a branch to
    describe), not created or deleted."""
    if not isinstance(name, str) or not name:
        raise errors.InvalidInputError(f"{argument} must be a non-empty string, got {name!r}")
    if name == MAIN:
        if main_allowed:
            return name
        raise errors.InvalidInputError(f"{argument}: {MAIN!r} is the default branch; choose another name")
    if ".." in name or "\\" in name or "//" in name:
        raise errors.InvalidInputError(f"{argument} {name!r} must not contain '..', '//' or '\\'")
    if name.startswith("/") or name.endswith("/") or name.endswith(".lock"):
        raise errors.InvalidInputError(
            f"{argument} {name!r} must not start or end with '/' or end with '.lock'"
        )
    for segment in name.split("/"):
        if segment == "." or not all(char.isalnum() or char in ".-_" for char in segment):
            raise errors.InvalidInputError(
                f"{argument} {name!r}: segment {segment!r} may hold only letters, digits, '.', '-' and '_' "
                "(and is not '.')"
            )
    if len(_ref_name(name).encode()) > _MAX_COMPONENT_BYTES:
        raise errors.InvalidInputError(
            f"{argument} {name[:40]!r}...: too long for a file name on the store "
            f"(at most {_MAX_COMPONENT_BYTES} bytes once percent-encoded, with {_REF_SUFFIX!r})"
        )
    return name


def branch_or_main(name: str | None, argument: str = "branch") -> str | None:
    """A branch to work on (13 naming ``argument`` for a bad name), None for main (``None`` or
    ``"main"``): so a caller that always names its branch, ``main`` included, reaches the table."""
    if name is None:
        return None
    checked = validate_name(name, argument, main_allowed=True)
    return None if checked == MAIN else checked


def _ref_name(name: str) -> str:
    """The ref's file name, as Lance spells it (``a/b`` -> ``a%2Fb.json``, ``ü`` -> ``%C3%BC.json``)."""
    return quote(name, safe="") + _REF_SUFFIX


def branch_location(location: str, name: str) -> str:
    """Where branch ``name`` of the table at ``location`` lives: a Lance dataset directory."""
    return f"{location.rstrip('/')}/{layout.BRANCH_TREE_DIR}/{name}"


def has_ref(context: NamespaceContext, location: str, name: str) -> bool:
    """Whether branch ``name`` exists: its ref file (one HEAD on S3; Lance's listing would read
    every branch's)."""
    return context.fs.exists(f"{location.rstrip('/')}/{layout.BRANCH_REFS_DIR}/{_ref_name(name)}")


def require(context: NamespaceContext, table: ResolvedTable, name: str) -> str:
    """The branch's location; 22 unless it exists."""
    if table.declared_only or not has_ref(context, table.location, name):
        raise errors.TableBranchNotFoundError(f"table {ids.display(table.id)} has no branch {name!r}")
    return branch_location(table.location, name)


def only_on_branch(context: NamespaceContext, table_id: list[str], name: str) -> ResolvedTable | None:
    """A table main does not have that branch ``name`` made (``branch_objects.py``), once its branch
    exists; None otherwise."""
    item = branch_objects.find(context, name, table_id)
    if item is None or item.kind != "table" or item.location is None:
        return None
    if not has_ref(context, item.location, name):
        return None  # its creation has not finished (or was killed): the next write finishes it
    return ResolvedTable(list(table_id), item.location, False, False)


def resolve(context: NamespaceContext, table_id: list[str], name: str) -> ResolvedTable:
    """The table that has branch ``name``: main's, else one only the branch has (4 or 1 as main's
    resolution when neither)."""
    try:
        return context.resolve_table(table_id)
    except (errors.TableNotFoundError, errors.NamespaceNotFoundError):
        found = only_on_branch(context, table_id, name)
        if found is None:
            raise
        return found


def commit_target(
    context: NamespaceContext, table: ResolvedTable, new_table: bool, name: str, location: str | None
) -> ResolvedTable:
    """Where a commit to branch ``name`` of ``table`` lands (``commit.commit_table``): the
    branch's dataset, committed file-based (native tracks no branch version in ``__manifest``).
    A table main does not have is one the branch made (``create_table_on_branch``), else 4; 22 for
    a missing branch, 13 for a ``location`` that is not the branch's."""
    if new_table:
        found = only_on_branch(context, table.id, name)
        if found is None:
            raise errors.TableNotFoundError(
                f"table {ids.display(table.id)} not found: a branch commit needs the table on main, "
                "or made on the branch first (create_table_on_branch)"
            )
        table = found
    target = require(context, table, name)
    if location is not None and location.rstrip("/") != target:
        raise errors.InvalidInputError(
            f"branch {name!r} of table {ids.display(table.id)} lives at {target}, not at {location}"
        )
    return ResolvedTable(table.id, target, table.in_manifest, False)


def claim_path(context: NamespaceContext, location: str, name: str) -> str:
    """Where a creation of branch ``name`` of the table at ``location`` claims the name: under the
    engine's directory at the root, never in the table's (Lance reads ``_refs/`` and ``tree/``)."""
    table = quote(layout.relative_location(context.fs, location.rstrip("/")), safe="")
    return context.fs.join(ENGINE_DIR, "claims", table, quote(name, safe=""))


@contextmanager
def claimed(context: NamespaceContext, table: ResolvedTable, name: str) -> Iterator[None]:
    """Hold the exclusive claim on creating branch ``name`` of ``table`` (a conditional put), else 23.

    Lance writes a new branch's manifest before its ref, and the ref decides who won: a racing
    creator from another version would leave its manifest in the winner's ``tree/<name>/_versions/``,
    where a higher number becomes the branch's latest. So only the claim's holder lets Lance write,
    after checking again that no ref landed meanwhile (a winner releases its claim only once its ref
    is there). The claim goes when the creation ends, whatever its outcome; a process killed while
    holding it leaves it, and the name stays taken (23, naming the file to remove)."""
    path = claim_path(context, table.location, name)
    try:
        context.fs.put_if_not_exists(path, b"creating")
    except FileExistsError:
        raise errors.TableBranchAlreadyExistsError(
            f"table {ids.display(table.id)}: branch {name!r} is being created by another writer (or a "
            f"creation was killed: remove {path} if none is running)"
        ) from None
    try:
        if has_ref(context, table.location, name):
            raise errors.TableBranchAlreadyExistsError(
                f"table {ids.display(table.id)} already has branch {name!r}"
            )
        yield
    finally:
        context.fs.rm(path)


def branch_info(name: str, branch: Mapping[str, Any]) -> BranchInfo:
    """Lance's record of a branch (a value of ``dataset.branches.list()``) as the engine returns it."""
    created = branch.get("create_at")
    return BranchInfo(
        name,
        branch.get("parent_branch"),
        int(branch["parent_version"]),
        int(created) if created is not None else 0,
        int(branch.get("manifest_size") or 0),
        dict(branch.get("metadata") or {}),
    )
