"""Where tables live on storage and the V1 marker files.

Directory names follow the spec: ``<name>.lance`` for root tables while directory listing is on,
``<8 random hex>_<object_id>`` otherwise (random like native, so drop-and-recreate never reuses a
directory). Markers hold the 8 bytes ``reserved``, exactly what native writes, so both read them.
"""

from __future__ import annotations

import secrets

from dbt.adapters.lancens.namespace import errors, ids
from dbt.adapters.lancens.namespace.storage import Storage

V1_SUFFIX = ".lance"
RESERVED_MARKER = ".lance-reserved"
DEREGISTERED_MARKER = ".lance-deregistered"
MARKER_CONTENT = b"reserved"
DATA_DIR = "data"
VERSIONS_DIR = "_versions"
TRANSACTIONS_DIR = "_transactions"
DELETIONS_DIR = "_deletions"
INDICES_DIR = "_indices"
REFS_DIR = "_refs"
BRANCH_REFS_DIR = "_refs/branches"
BRANCH_TREE_DIR = "tree"
MANIFEST_SUFFIX = ".manifest"
TRANSACTION_SUFFIX = ".txn"
DETACHED_PREFIX = "d"
_U64_MAX = 2**64 - 1
_V2_DIGITS = 20


def v1_dir_name(name: str) -> str:
    return name + V1_SUFFIX


def v2_dir_name(identifier: list[str]) -> str:
    return f"{secrets.token_hex(4)}_{ids.object_id(identifier)}"


def is_absolute_location(location: str) -> bool:
    return "://" in location or location.startswith("/")


def absolute_location(storage: Storage, location: str) -> str:
    """A manifest ``location`` (relative to the root, or absolute for external tables) made absolute."""
    if is_absolute_location(location):
        return location
    return storage.join(location)


def relative_location(storage: Storage, location: str) -> str:
    """The manifest form of ``location``: relative to the root when it lies under it."""
    prefix = storage.join("")
    return location[len(prefix) :] if location.startswith(prefix) else location


def listed_by_directory(storage: Storage, location: str) -> bool:
    """Whether compatibility-mode directory listing would take ``location`` for a V1 table: a
    direct child of the root whose name ends in ``.lance``."""
    relative = relative_location(storage, location)
    return relative != location and "/" not in relative and relative.endswith(V1_SUFFIX)


def marker_path(location: str, marker: str) -> str:
    return f"{location}/{marker}"


def has_versions(storage: Storage, location: str) -> bool:
    """A table has data once its ``_versions/`` holds a finalized manifest (spec 001: otherwise
    declared only). Staging manifests (``<name>.manifest-<uuid>``, step 1 of a managed or staged
    commit) do not count: until published they are no version of the table."""
    return any(parse_manifest_name(name) is not None for name in storage.names(f"{location}/{VERSIONS_DIR}"))


def v1_table_exists(storage: Storage, location: str) -> bool:
    """Spec V1 existence: the directory holds at least one file and no deregistered marker."""
    return storage.has_files(location) and not storage.exists(marker_path(location, DEREGISTERED_MARKER))


def v1_table_names(storage: Storage) -> list[str]:
    """Names of root ``*.lance`` directories that are tables by the V1 existence rule.

    Native lists every ``*.lance`` entry (files and empty dirs too); the spec's rule is stricter and
    is what we follow.
    """
    names = []
    for entry in storage.ls(storage.root):
        base = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        if entry.get("type") != "directory" or not base.endswith(V1_SUFFIX) or base == V1_SUFFIX:
            continue
        if ids.DELIMITER in base:  # a child namespace's <hash>_<ns>$<name>.lance, never a V1 name
            continue
        if v1_table_exists(storage, storage.join(base)):
            names.append(base[: -len(V1_SUFFIX)])
    return names


def manifest_name(version: int, naming_scheme: str = "V2") -> str:
    """File name of a finalized manifest: V2 counts down from u64::MAX so listings start at the newest."""
    ids.validate_version(version)
    if naming_scheme == "V2":
        return f"{_U64_MAX - version:0{_V2_DIGITS}d}{MANIFEST_SUFFIX}"
    if naming_scheme == "V1":
        return f"{version}{MANIFEST_SUFFIX}"
    raise errors.InvalidInputError(f"naming_scheme must be 'V1' or 'V2', got {naming_scheme!r}")


def parse_manifest_name(name: str) -> tuple[int, str] | None:
    """``(version, scheme)`` of a finalized manifest file name; None for anything else (staging files,
    ``latest_version_hint.json``, detached manifests)."""
    if not name.endswith(MANIFEST_SUFFIX):
        return None
    stem = name[: -len(MANIFEST_SUFFIX)]
    if not stem.isdigit():
        return None
    if len(stem) == _V2_DIGITS:
        return _U64_MAX - int(stem), "V2"
    return int(stem), "V1"


def detached_manifest_path(location: str, version: int) -> str:
    """Where Lance writes a detached commit's manifest: beside the table's versions, never listed
    as one of them."""
    return f"{location.rstrip('/')}/{VERSIONS_DIR}/{DETACHED_PREFIX}{version}{MANIFEST_SUFFIX}"


def parse_detached_manifest_name(name: str) -> int | None:
    """The version of a detached manifest's file name; None for any other name."""
    stem = name.removeprefix(DETACHED_PREFIX).removesuffix(MANIFEST_SUFFIX)
    if not (name.startswith(DETACHED_PREFIX) and name.endswith(MANIFEST_SUFFIX) and stem.isdigit()):
        return None
    return int(stem)


def is_detached_manifest_name(name: str) -> bool:
    """Whether `name` is spelled as a detached manifest (its version unreadable included)."""
    return name.startswith(DETACHED_PREFIX) and name.endswith(MANIFEST_SUFFIX)


def transaction_file_path(location: str, read_version: int, transaction_uuid: str) -> str:
    """Where Lance writes a transaction: named after the version it was built on and its uuid."""
    directory = f"{location.rstrip('/')}/{TRANSACTIONS_DIR}"
    return f"{directory}/{read_version}-{transaction_uuid}{TRANSACTION_SUFFIX}"


def transaction_file_suffix(transaction_uuid: str) -> str:
    """The end of a transaction file's name, known before the version it was rebased onto is."""
    return f"-{transaction_uuid}{TRANSACTION_SUFFIX}"
