"""Clone holds: the source version a `dbt clone` reads is kept until the clone lets it go.

A Lance shallow clone (materializations/clone.py) reads the source's data, deletion and index files
where they are (base paths in the clone's manifest); the source knows nothing of it. A cleanup of
the source's old versions or a purge of the source would delete files the clone reads. So the clone
tags the source version it reads `lancens-clone.<clone id>.held` (a hold): Lance's cleanup (ours,
pylance's, LanceDB's) never removes a tagged version, and a purge of a table that a clone still
reads is refused, naming the clone.

A hold goes when its clone stops reading the source:
* the clone is purged (`drop_table purge`, a dbt drop, `drop_schema`) or replaced by a new clone;
* a cleanup of the clone removes its last version that reads source files (a clone that `dbt run`
  rebuilt still reads them in its older versions, which time travel can open, until those go);
* a cleanup of the source finds the hold's clone gone or no longer reading it (a clone dropped by
  another tool): only holds older than the cleanup's grace, so a clone being made keeps its hold.
A clone the namespace no longer knows (deregistered, or dropped by another tool: the two look the
same) protects nothing: its tag goes with the source's next cleanup after the grace, and a purge
of the source is not refused for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import lance

from dbt.adapters.lancens.metadata.engine_dataset import latest, version_history
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.models import TableInfo

PREFIX = "lancens-clone."
SUFFIX = ".held"
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_MAX_TAG_BYTES = 200  # the tag is a file name under `_refs/tags/`


class CloneHoldError(ValueError):
    """A purge refused because a clone still reads the table; the message names the clone(s)."""


@dataclass(frozen=True)
class Hold:
    """One clone's hold on a version of its source."""

    clone_id: list[str]
    version: int
    tagged_at_millis: int | None


def hold_tag(clone_id: Sequence[str]) -> str:
    """The tag naming `clone_id`, in the characters Lance allows in a tag (letters, digits, `.-_`).

    Each id level is kept as is except `_` (written `__`) and any other character (`_<hex>_`);
    levels are joined with `.`, so the tag reads like the clone's dbt name and decodes exactly."""
    levels = [
        "".join(ch if ch in _PLAIN else "__" if ch == "_" else f"_{ord(ch):x}_" for ch in level)
        for level in clone_id
    ]
    tag = PREFIX + ".".join(levels) + SUFFIX
    if len(tag.encode()) > _MAX_TAG_BYTES:
        raise CloneHoldError(
            f"cannot clone into {'.'.join(clone_id)}: its hold tag on the source would be "
            f"{len(tag.encode())} bytes (at most {_MAX_TAG_BYTES}); use a shorter schema or name"
        )
    return tag


def clone_of(tag: str) -> list[str] | None:
    """The clone id a hold tag names; None for any other tag (a hand-made one that does not decode)."""
    if not (tag.startswith(PREFIX) and tag.endswith(SUFFIX)) or len(tag) <= len(PREFIX + SUFFIX):
        return None
    try:
        return [_decode(level) for level in tag[len(PREFIX) : -len(SUFFIX)].split(".")]
    except (IndexError, ValueError):
        return None


def _decode(level: str) -> str:
    out, index = [], 0
    while index < len(level):
        if level[index] != "_":
            out.append(level[index])
            index += 1
        elif level[index + 1] == "_":
            out.append("_")
            index += 2
        else:
            end = level.index("_", index + 1)
            out.append(chr(int(level[index + 1 : end], 16)))
            index = end + 1
    return "".join(out)


# -- taking and releasing ------------------------------------------------------------------------
def hold(namespace: DirectoryNamespace, source_id: list[str], version: int, clone_id: list[str]) -> None:
    """Tag `version` of the source for the clone (moving a hold the same clone id left behind)."""
    tags = latest(namespace, source_id).tags
    tag = hold_tag(clone_id)
    if tag in tags.list():
        tags.update(tag, version)
    else:
        tags.create(tag, version)


def release(namespace: DirectoryNamespace, clone_id: list[str], sources: Iterable[str]) -> None:
    """Remove the clone's hold from each source location (one that is gone or has none is skipped)."""
    tag = hold_tag(clone_id)
    for location in sources:
        try:
            tags = lance.dataset(location, storage_options=namespace.storage_options or None).tags
            if tag in tags.list():
                tags.delete(tag)
        except (ValueError, OSError):
            continue  # the source was purged meanwhile, or another release was first


def holds_on(namespace: DirectoryNamespace, table_id: list[str]) -> list[Hold]:
    """The clone holds on the table's versions, live or not (none on a table declared only)."""
    if namespace.describe_table(table_id).declared_only:
        return []
    holds = []
    for tag, info in latest(namespace, table_id).tags.list().items():
        clone_id = clone_of(tag)
        if clone_id is not None:
            moment = info.get("updated_at") or info.get("created_at")
            millis = int(moment.timestamp() * 1000) if moment is not None else None
            holds.append(Hold(clone_id, int(info["version"]), millis))
    return holds


def live_holds(namespace: DirectoryNamespace, table_id: list[str]) -> list[Hold]:
    """The holds whose clone exists and still reads files of the table."""
    location = _plain(namespace.describe_table(table_id).location)
    return [h for h in holds_on(namespace, table_id) if location in sources_read(namespace, h.clone_id)]


# -- what a clone reads ----------------------------------------------------------------------------
def base_locations(namespace: DirectoryNamespace, table_id: list[str]) -> set[str]:
    """The other tables' locations any version of the table may read (its manifests' base paths)."""
    return _bases(namespace, table_id, with_reads=False)[0]


def sources_read(namespace: DirectoryNamespace, table_id: list[str]) -> set[str]:
    """The locations whose data, deletion or index files a remaining version of the table reads;
    empty when the table does not exist."""
    return _bases(namespace, table_id, with_reads=True)[1]


def _bases(namespace: DirectoryNamespace, table_id: list[str], with_reads: bool) -> tuple[set[str], set[str]]:
    """One walk over the table's versions: the locations their base paths name, and (`with_reads`)
    those whose files a version reads."""
    try:
        info = namespace.describe_table(table_id)
    except errors.TableNotFoundError:
        return set(), set()
    if info.declared_only:
        return set(), set()
    options = namespace.storage_options or None
    named: set[str] = set()
    read: set[str] = set()
    for number in version_history(namespace, table_id, info.location):
        try:
            dataset = lance.dataset(info.location, version=number, storage_options=options)
        except (ValueError, OSError):
            continue  # removed by a cleanup since it was listed
        bases = {base.id: base.path for base in dataset.base_paths().values() if base.is_dataset_root}
        named.update(_location(namespace, path) for path in bases.values())
        if with_reads:
            used = _base_ids_read(dataset)
            read.update(_location(namespace, path) for base_id, path in bases.items() if base_id in used)
    return named, read


def _base_ids_read(dataset: lance.LanceDataset) -> set[int]:
    """The base path ids the version's data files, deletion files and index segments live under."""
    ids: set[int | None] = set()
    for fragment in dataset.get_fragments():
        ids.update(data_file.base_id for data_file in fragment.data_files())
        if (deletion := fragment.metadata.deletion_file) is not None:
            ids.add(deletion.base_id)
    for index in dataset.describe_indices():
        ids.update(segment.base_id for segment in index.segments)
    return {base_id for base_id in ids if base_id is not None}


def _plain(location: str) -> str:
    """A location spelled one way: no `file://` scheme, no trailing slash."""
    return location.removeprefix("file://").rstrip("/")


def _location(namespace: DirectoryNamespace, base_path: str) -> str:
    """The location a base path names: Lance writes an object store's base path as the key in the
    root's bucket, without scheme and bucket."""
    root = _plain(namespace.root)
    if "://" in base_path or "://" not in root:
        return _plain(base_path)
    scheme, rest = root.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}/{_plain(base_path).lstrip('/')}"


# -- what dbt calls ------------------------------------------------------------------------------------
def refuse_if_held(
    namespace: DirectoryNamespace, table_id: list[str], also_dropped: Iterable[list[str]] = ()
) -> None:
    """Fail naming the clones that read the table (those in `also_dropped` go in the same drop)."""
    dropped = [list(other) for other in also_dropped]
    holds = [h for h in live_holds(namespace, table_id) if h.clone_id not in dropped]
    if holds:
        clones = ", ".join(f"{'.'.join(h.clone_id)} (version {h.version})" for h in holds)
        raise CloneHoldError(
            f"cannot purge {'.'.join(table_id)}: dbt clone(s) {clones} read its files; drop or "
            "rebuild the clone(s) first (a cleanup of a rebuilt clone's old versions lets go), "
            "or deregister the table to keep its files"
        )


def purge(namespace: DirectoryNamespace, table_id: list[str]) -> TableInfo:
    """Drop the table with its files unless a clone reads them; a clone's own holds go with it."""
    refuse_if_held(namespace, table_id)
    sources = base_locations(namespace, table_id)  # read before the drop deletes the manifests
    info = namespace.drop_table(table_id)
    release(namespace, table_id, sources)
    return info


def purge_all(namespace: DirectoryNamespace, table_ids: list[list[str]]) -> None:
    """Purge the tables, clones before the sources they read; refused before any drop when a clone
    outside `table_ids` reads one of them."""
    for table_id in table_ids:
        refuse_if_held(namespace, table_id, also_dropped=table_ids)
    readers = {tuple(t): [h.clone_id for h in live_holds(namespace, t)] for t in table_ids}
    pending = [list(t) for t in table_ids]
    while pending:
        unread = (t for t in pending if not any(reader in pending for reader in readers[tuple(t)]))
        table_id = next(unread, pending[0])  # no cycle: a clone is made after its source
        purge(namespace, table_id)
        pending.remove(table_id)


def move(namespace: DirectoryNamespace, old_id: list[str], new_id: list[str]) -> None:
    """After a rename of a clone: its holds name the new id (a hold naming a gone id is stale)."""
    old_tag, new_tag = hold_tag(old_id), hold_tag(new_id)
    for location in base_locations(namespace, new_id):
        tags = lance.dataset(location, storage_options=namespace.storage_options or None).tags
        listed = tags.list()
        if old_tag in listed:
            if new_tag not in listed:
                tags.create(new_tag, int(listed[old_tag]["version"]))
            tags.delete(old_tag)


def release_unread(namespace: DirectoryNamespace, clone_id: list[str]) -> None:
    """Let go of the sources no remaining version of the clone reads (after its cleanup)."""
    named, read = _bases(namespace, clone_id, with_reads=True)
    release(namespace, clone_id, named - read)


def release_stale(namespace: DirectoryNamespace, source_id: list[str], grace: timedelta) -> None:
    """Remove holds older than `grace` whose clone is gone or reads the source no more."""
    location = _plain(namespace.describe_table(source_id).location)
    cutoff = int((time.time() - grace.total_seconds()) * 1000)
    holds = holds_on(namespace, source_id)
    if not holds:
        return
    tags = latest(namespace, source_id).tags
    for stale in holds:
        old = stale.tagged_at_millis is not None and stale.tagged_at_millis <= cutoff
        if old and location not in sources_read(namespace, stale.clone_id):
            tags.delete(hold_tag(stale.clone_id))
