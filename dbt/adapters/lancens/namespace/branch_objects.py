"""Tables and namespaces that exist only on a branch, until a promotion registers them on main.

A Lance branch starts from a version of main, and main's ``__manifest`` is what every reader of
the root (native, LanceDB, lance-spark) lists: a table first built by a branch target must not get
a row there before its promotion. So the engine records such an object outside ``__manifest``, in a
small file per object under the root's ``.lancens-branches/objects/<branch>/`` (percent-encoded
branch and object id), holding its kind and, for a table, its directory. That directory is a Lance
table of its own, unregistered: main is one empty version with the table's schema (Lance branches a
version, so there must be one), and the rows are on the Lance branch of the same name
(``tree/<branch>/``), so a plain Lance reader of the directory sees no rows but on the branch.

Written with a conditional put: of two writers recording one object, the first one's record (and
directory) is the object's. A promotion (``metadata/promotion.py``) registers the objects in main's
catalog and then forgets their records; a branch's deletion removes them with their directories.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote, unquote

from dbt.adapters.lancens.namespace import ids, layout
from dbt.adapters.lancens.namespace.context import NamespaceContext

ENGINE_DIR = ".lancens-branches"  # the engine's own files at the root (no table directory starts with '.')
_SUFFIX = ".json"


@dataclass(frozen=True)
class BranchObject:
    """A table or namespace of branch ``branch`` that main does not have (yet)."""

    id: list[str]
    kind: str  # "table" or "namespace"
    location: str | None  # a table's directory (absolute); None for a namespace
    branch: str


def _directory(context: NamespaceContext, branch: str) -> str:
    return context.fs.join(ENGINE_DIR, "objects", quote(branch, safe=""))


def _path(context: NamespaceContext, branch: str, object_id: list[str]) -> str:
    return f"{_directory(context, branch)}/{quote(ids.object_id(object_id), safe='')}{_SUFFIX}"


def find(context: NamespaceContext, branch: str, object_id: list[str]) -> BranchObject | None:
    """The branch's record of ``object_id``, or None."""
    try:
        raw = context.fs.read_bytes(_path(context, branch, object_id))
    except FileNotFoundError:
        return None
    return _parse(context, branch, object_id, raw)


def _parse(context: NamespaceContext, branch: str, object_id: list[str], raw: bytes) -> BranchObject:
    record = json.loads(raw)
    location = record.get("location")
    return BranchObject(
        list(object_id),
        str(record["kind"]),
        None if location is None else layout.absolute_location(context.fs, location),
        branch,
    )


def record(
    context: NamespaceContext, branch: str, object_id: list[str], kind: str, location: str | None = None
) -> BranchObject:
    """Record ``object_id`` as existing only on ``branch``; the existing record when another writer
    made it first (the caller builds on that one)."""
    body = {
        "kind": kind,
        "location": None if location is None else layout.relative_location(context.fs, location),
    }
    path = _path(context, branch, object_id)
    try:
        context.fs.put_if_not_exists(path, json.dumps(body, sort_keys=True).encode())
    except FileExistsError:
        pass
    found = find(context, branch, object_id)
    assert found is not None, f"{path} was just written"
    return found


def listed(context: NamespaceContext, branch: str) -> list[BranchObject]:
    """Every object recorded for ``branch``: namespaces first, parents before children, then tables."""
    directory = _directory(context, branch)
    found = []
    for name in context.fs.names(directory):
        if not name.endswith(_SUFFIX):
            continue
        object_id = ids.split(unquote(name[: -len(_SUFFIX)]))
        try:
            raw = context.fs.read_bytes(f"{directory}/{name}")
        except FileNotFoundError:
            continue  # forgotten meanwhile (a promotion or deletion)
        found.append(_parse(context, branch, object_id, raw))
    return sorted(found, key=lambda o: (o.kind != "namespace", len(o.id), o.id))


def branch_names(context: NamespaceContext) -> list[str]:
    """Every branch that has a record."""
    return sorted(unquote(name) for name in context.fs.names(context.fs.join(ENGINE_DIR, "objects")))


def forget(context: NamespaceContext, item: BranchObject) -> None:
    """Remove ``item``'s record (its directory, if any, is the caller's)."""
    try:
        context.fs.rm(_path(context, item.branch, item.id))
    except FileNotFoundError:
        pass
    context.fs.remove_if_empty(_directory(context, item.branch))
