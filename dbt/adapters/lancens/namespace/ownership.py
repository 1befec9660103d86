"""What under a root the engine can prove is its own, and a root it must not take over unasked.

A root is any path or prefix a profile names, so it may be someone's directory (a home folder, the
dbt project itself with ``root: .``, a bucket shared with other data). Cleanup therefore removes a
path only when every entry under it has the shape of a Lance table directory, as Lance and this
engine write one (``_versions/``, ``data/*.lance``, ``_indices/<uuid>/``, ``_transactions/``,
``_deletions/``, ``_refs/``, the engine's ``.lance-reserved`` marker, a writer's temp file); one
file or directory of another shape anywhere below makes the whole directory foreign, and it is kept
whole. A root's first ``__manifest`` is refused while the root holds entries that are no table
directory, unless the ``allow_foreign_root`` property says the user means to share it.
"""

from __future__ import annotations

import re

from dbt.adapters.lancens.namespace import errors, ids, layout
from dbt.adapters.lancens.namespace.storage import Storage

ALLOW_FOREIGN_ROOT = "allow_foreign_root"
_V2_DIR = re.compile(r"[0-9a-f]{8}_.+")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Lance's local writer writes each file as a temp file beside its target (Rust's tempfile crate,
# `.tmp` and six characters) and renames it once complete; a killed writer leaves it there.
_TEMP_FILE = re.compile(r"\.tmp[A-Za-z0-9]{6}")
_MARKERS = (layout.RESERVED_MARKER, layout.DEREGISTERED_MARKER)
_DIRECTORIES = {
    layout.DATA_DIR,
    layout.VERSIONS_DIR,
    layout.TRANSACTIONS_DIR,
    layout.DELETIONS_DIR,
    layout.INDICES_DIR,
    layout.REFS_DIR,
    f"{layout.REFS_DIR}/tags",
    f"{layout.REFS_DIR}/branches",
}
_SHOWN = 5  # foreign entries named in a refusal


def is_table_dir_name(name: str) -> bool:
    """Whether a root entry is named as the engine names a table's directory: ``<name>.lance``
    (V1 naming) or ``<8 hex>_<object id>`` (``layout.v2_dir_name``)."""
    if name.startswith("."):
        return False
    return (name.endswith(layout.V1_SUFFIX) and name != layout.V1_SUFFIX) or bool(_V2_DIR.fullmatch(name))


def is_table_file(relative: str) -> bool:
    """Whether a file at ``relative`` (to a table's directory) is one Lance or the engine writes there."""
    folder, _, name = relative.rpartition("/")
    if _TEMP_FILE.fullmatch(name):
        return folder in _DIRECTORIES or is_index_dir(folder)
    if folder == layout.DATA_DIR:
        return name.endswith(layout.V1_SUFFIX)
    if folder == layout.VERSIONS_DIR:
        return (
            name.endswith(layout.MANIFEST_SUFFIX)  # finalized and detached (`d<n>.manifest`) manifests
            or f"{layout.MANIFEST_SUFFIX}-" in name  # staged ones, `<name>.manifest-<uuid>`
            or name == "latest_version_hint.json"
        )
    if folder == layout.TRANSACTIONS_DIR:
        return name.endswith(layout.TRANSACTION_SUFFIX)
    if folder == layout.DELETIONS_DIR:
        return name.endswith((".arrow", ".bin"))
    if folder in (f"{layout.REFS_DIR}/tags", f"{layout.REFS_DIR}/branches"):
        return name.endswith(".json")
    return is_index_dir(folder)


def is_index_dir(relative: str) -> bool:
    """Whether ``relative`` (to a table's directory) is one index segment's ``_indices/<uuid>``."""
    parts = relative.split("/")
    return len(parts) == 2 and parts[0] == layout.INDICES_DIR and bool(_UUID.fullmatch(parts[1]))


def foreign_entry(storage: Storage, location: str) -> str | None:
    """The first entry under the directory ``location`` (its path relative to it) that is no part
    of a Lance table directory; None when every entry is one (an empty directory included).

    A marker counts only with the content the engine writes (``layout.MARKER_CONTENT``). The walk
    lists one directory at a time and stops at the first foreign entry."""
    pending = [""]
    while pending:
        folder = pending.pop()
        for entry in storage.ls(f"{location}/{folder}" if folder else location):
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            relative = f"{folder}/{name}" if folder else name
            if entry.get("type") == "directory":
                if relative not in _DIRECTORIES and not is_index_dir(relative):
                    return relative + "/"
                pending.append(relative)
            elif not folder and name in _MARKERS:
                if storage.read_bytes(f"{location}/{name}") != layout.MARKER_CONTENT:
                    return relative
            elif not is_table_file(relative):
                return relative
    return None


def foreign_root_entries(storage: Storage) -> list[str]:
    """The names of the root's entries that are neither ``__manifest`` nor named as a table's
    directory, sorted (a directory shown with its ``/``). An entry named like a table is taken as
    Lance's whatever it holds: the spec's directory listing reads such names too."""
    names = []
    for entry in storage.ls(storage.root):
        name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        if name != ids.MANIFEST_NAME and not is_table_dir_name(name):
            names.append(name + ("/" if entry.get("type") == "directory" else ""))
    return sorted(names)


def refuse_foreign_root(storage: Storage, allowed: bool) -> None:
    """InvalidInput (13) naming the root, what in it is foreign and the property that allows it,
    unless ``allowed``. Called before a root's first ``__manifest`` is written: a root that already
    has one was taken on before, and one holding only table directories is a Lance root."""
    if allowed:
        return
    foreign = foreign_root_entries(storage)
    if not foreign:
        return
    more = len(foreign) - _SHOWN
    shown = ", ".join(foreign[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
    raise errors.InvalidInputError(
        f"the namespace root {storage.root!r} is not empty and holds no namespace yet (no __manifest): "
        f"{shown}. Point the root at an empty or new directory (or prefix), or set "
        f"`{ALLOW_FOREIGN_ROOT}: true` to keep a namespace among these files (cleanup never removes "
        "them); nothing was written"
    )
