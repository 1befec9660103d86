"""Keeping tables small and history bounded: compaction, version cleanup, leftovers of killed runs.

* `optimize_table`: Lance's compaction (small fragments rewritten into few, indexes remapped) and
  index optimisation (rows no index covers yet added to it), committed through the engine
  (`engine_dataset.open_for_commits`); rows unchanged.
* `cleanup_table`: removes old versions and the files only they reference with Lance's own
  cleanup, never the latest version and never a tagged one. Under table version management the
  engine's `table_version` rows are the history, so the engine deletes the doomed versions first
  (rows and manifests) and their manifests are put back only for Lance's cleanup to read which
  files they alone reference; a crash in between leaves plain, still readable old versions that
  the next cleanup removes.
* Leftovers of killed runs and lost races, only when older than `grace` (a running writer is never
  disturbed; a grace below `MIN_GRACE` is refused unless the caller says `allow_short_grace`):
  staged manifests no version row points at (`*.manifest-<uuid>`), detached manifests
  (`d*.manifest`) of killed atomic runs, data files (`data/*.lance`, a killed writer's temp files)
  and `_indices/<uuid>` directories no kept version reads (of every table and of `__manifest`),
  the run scratch directories `.lancens-staging/<invocation>/`, and directories of new tables that
  were staged but never published (named as the engine names a table's directory, no finalized
  manifest, no namespace entry; empty ones too).
* Only what is provably ours (`namespace/ownership.py`): a root may be someone's directory, so a
  directory goes only when every entry under it has a Lance table directory's shape. One with
  anything else in it is kept whole and reported (`skipped`); a root entry not named as a table
  directory is never looked into; a file of another shape inside a table's `data/` stays.
* What is in use comes from the namespace itself, never from one listing: the directories every
  table, declared table and view row owns (`DirectoryNamespace.registered_locations`), and, within
  a table, every version the engine or Lance lists (tagged ones, so a clone's hold, included) plus
  the detached versions of a run still within the grace.
* `repair`: a view or declared table whose reserved directory an older release's cleanup deleted
  gets its `.lance-reserved` back; `cleanup_namespace` runs it first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import lance

from dbt.adapters.lancens.definitions.maintenance_config import DEFAULT_OLDER_THAN_DAYS, MaintenanceConfig
from dbt.adapters.lancens.metadata import clone_holds
from dbt.adapters.lancens.metadata.engine_dataset import latest, open_for_commits, version_history
from dbt.adapters.lancens.metadata.tags import tagged_versions
from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages, ownership
from dbt.adapters.lancens.namespace.ids import MANIFEST_NAME
from dbt.adapters.lancens.namespace.layout import (
    DATA_DIR,
    DELETIONS_DIR,
    INDICES_DIR,
    VERSIONS_DIR,
    has_versions,
    is_detached_manifest_name,
    parse_detached_manifest_name,
)
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.runtime.staging import SCRATCH_DIR

DEFAULT_GRACE = timedelta(hours=24)
# Below this a cleanup may take the files of a run that is writing now (Delta's VACUUM refuses a
# retention below its safe default the same way); `allow_short_grace` turns the check off.
MIN_GRACE = timedelta(hours=1)
STAGED_MARK = ".manifest-"


@dataclass(frozen=True)
class OptimizeResult:
    """What `optimize_table` did to one table."""

    fragments_before: int
    fragments_after: int
    rows: int
    # the versions it committed: index optimisation one, compaction two (its Rewrite and the index
    # remap Lance commits after it); none when there was nothing to do
    versions: list[int]
    indexes_optimized: list[str]


@dataclass
class CleanupReport:
    """What a cleanup removed: versions per table and leftover paths, with the bytes freed; and the
    reservations it put back (`repair`)."""

    versions: dict[str, list[int]] = field(default_factory=dict)
    leftovers: list[str] = field(default_factory=list)
    bytes_removed: int = 0
    repaired: list[str] = field(default_factory=list)
    # directories shaped like a leftover that also hold what no Lance table has: kept, with why
    skipped: list[str] = field(default_factory=list)

    def merge(self, other: CleanupReport) -> None:
        self.versions.update(other.versions)
        self.leftovers.extend(other.leftovers)
        self.bytes_removed += other.bytes_removed
        self.repaired.extend(other.repaired)
        self.skipped.extend(other.skipped)

    def summary(self) -> str:
        removed = sum(len(versions) for versions in self.versions.values())
        lines = [
            f"removed {removed} version(s) of {len([v for v in self.versions.values() if v])} table(s), "
            f"{len(self.leftovers)} leftover path(s), {self.bytes_removed} bytes"
        ]
        lines += [f"  {table}: versions {', '.join(map(str, v))}" for table, v in self.versions.items() if v]
        lines += [f"  leftover {path}" for path in self.leftovers]
        lines += [f"  repaired {path} (its .lance-reserved was gone)" for path in self.repaired]
        lines += [f"  kept {entry}" for entry in self.skipped]
        return "\n".join(lines)


# -- optimize ------------------------------------------------------------------------------------------
def optimize_table(
    namespace: DirectoryNamespace, table_id: list[str], properties: dict[str, str]
) -> OptimizeResult:
    """Index the rows the table's indexes miss, then compact its fragments; rows are unchanged.

    Indexes first: Lance compacts fragments an index covers only with fragments the same index
    covers, so compacting first would leave one fragment per index coverage."""
    before = latest(namespace, table_id)
    fragments_before = len(before.get_fragments())
    dataset = open_for_commits(namespace, table_id, properties)
    missing = [
        index.name
        for index in dataset.describe_indices()
        if dataset.stats.index_stats(index.name)["num_unindexed_rows"]
    ]
    if missing:
        dataset.optimize.optimize_indices(index_names=missing)
        dataset = open_for_commits(namespace, table_id, properties)
    if fragments_before > 1 or any(f.metadata.deletion_file is not None for f in before.get_fragments()):
        dataset.optimize.compact_files()
    after = latest(namespace, table_id)
    committed = list(range(before.version + 1, after.version + 1))
    return OptimizeResult(
        fragments_before, len(after.get_fragments()), after.count_rows(), committed, missing
    )


# -- versions ------------------------------------------------------------------------------------------
def check_grace(grace: timedelta, allow_short_grace: bool) -> None:
    """Refuse a grace below `MIN_GRACE` unless `allow_short_grace`: the files a run writes are
    uncommitted until its commit, so a short grace lets a cleanup delete them under the run."""
    if grace < timedelta(0):
        raise ValueError(f"grace_hours must not be negative, got {grace.total_seconds() / 3600:g}")
    if grace < MIN_GRACE and not allow_short_grace:
        raise ValueError(
            f"grace_hours={grace.total_seconds() / 3600:g} is below the safe minimum of "
            f"{MIN_GRACE.total_seconds() / 3600:g} hour(s): a dbt run writing to the root now could have "
            "the files it has not committed yet removed, and fail. Pass `allow_short_grace: true` to "
            "clean up with it anyway, when nothing writes to the root meanwhile"
        )


def doomed_versions(
    versions: Sequence[tuple[int, int | None]],
    tagged: set[int],
    retain_versions: int | None,
    older_than: timedelta | None,
    now_millis: int,
) -> list[int]:
    """The versions a cleanup removes: not the latest, not tagged, not among the newest
    `retain_versions`, and older than `older_than` (versions are (number, timestamp millis))."""
    if retain_versions is None and older_than is None:
        raise ValueError("cleanup needs retain_versions or older_than_days (or both)")
    if retain_versions is not None and retain_versions < 1:
        raise ValueError(
            f"retain_versions must be at least 1 (the latest is always kept), got {retain_versions}"
        )
    if older_than is not None and older_than < timedelta(0):
        raise ValueError(f"older_than_days must not be negative, got {older_than.days}")
    ordered = sorted(versions, reverse=True)
    kept = {number for number, _ in ordered[: retain_versions or 1]}
    cutoff = now_millis - int(older_than.total_seconds() * 1000) if older_than is not None else None
    return sorted(
        number
        for number, millis in ordered
        if number not in kept
        and number not in tagged
        and (cutoff is None or (millis is not None and millis <= cutoff))
    )


def cleanup_table(
    namespace: DirectoryNamespace,
    table_id: list[str],
    retain_versions: int | None = None,
    older_than: timedelta | None = None,
    grace: timedelta = DEFAULT_GRACE,
    allow_short_grace: bool = False,
) -> CleanupReport:
    """Remove the table's old versions (when `retain_versions` or `older_than` is given) and the
    leftovers of killed writes older than `grace` (`check_grace`)."""
    check_grace(grace, allow_short_grace)
    versions_wanted = retain_versions is not None or older_than is not None
    if versions_wanted:
        doomed_versions([], set(), retain_versions, older_than, 0)  # bad arguments fail before any work
    location = namespace.describe_table(table_id).location  # finishes interrupted managed commits
    report = CleanupReport(versions={".".join(table_id): []})
    if versions_wanted:
        clone_holds.release_stale(namespace, table_id, grace)  # before the tags decide what stays
        history = version_history(namespace, table_id, location)
        doomed = doomed_versions(
            list(history.items()),
            tagged_versions(namespace, table_id),
            retain_versions,
            older_than,
            int(time.time() * 1000),
        )
        if doomed:
            report.bytes_removed += _remove_versions(namespace, table_id, location, doomed)
            report.versions[".".join(table_id)] = doomed
        clone_holds.release_unread(namespace, table_id)  # a rebuilt clone whose old versions went
    report.merge(_table_leftovers(namespace, table_id, location, grace))
    return report


def _remove_versions(
    namespace: DirectoryNamespace, table_id: list[str], location: str, doomed: list[int]
) -> int:
    """Remove the `doomed` versions and the files only they reference; returns the bytes freed.

    Lance's cleanup goes first (it decides which data files only those versions reference and
    deletes their manifests); then the engine deletes the version rows whose manifests are gone,
    under table version management. A crash between the two leaves rows the engine no longer lists
    as versions, which the next cleanup deletes."""
    dataset = lance.dataset(location, storage_options=namespace.storage_options or None)
    stats = dataset.cleanup_old_versions(
        older_than=timedelta(0), versions=doomed, error_if_tagged_old_versions=False
    )
    if namespace.version_management_enabled():
        namespace.batch_delete_table_versions(table_id, doomed, ignore_missing=True)
    return int(stats.bytes_removed)


# -- leftovers -----------------------------------------------------------------------------------------
def _table_leftovers(
    namespace: DirectoryNamespace, table_id: list[str], location: str, grace: timedelta
) -> CleanupReport:
    """Staged and detached manifests no version needs, then data files no manifest references."""
    storage = namespace.storage
    report = CleanupReport()
    published = {
        v.manifest_path.rstrip("/").rsplit("/", 1)[-1]
        for v in all_pages(namespace.list_table_versions, table_id)
    }
    detached_kept: list[int] = []
    for entry in storage.ls(f"{location}/{VERSIONS_DIR}"):
        name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        staged = STAGED_MARK in name and name not in published
        detached = is_detached_manifest_name(name)
        if not (staged or detached):
            continue
        if _older_than(entry, grace):
            _remove(storage, f"{location}/{VERSIONS_DIR}/{name}", entry, report)
        elif (version := parse_detached_manifest_name(name)) is not None:
            detached_kept.append(version)
    kept = {*version_history(namespace, table_id, location), *tagged_versions(namespace, table_id)}
    report.merge(_unreferenced_files(namespace, location, [*kept, *detached_kept], grace))
    return report


def _unreferenced_files(
    namespace: DirectoryNamespace, location: str, versions: list[int], grace: timedelta
) -> CleanupReport:
    """Data files, deletion files and `_indices/<uuid>` directories older than `grace` that none of
    `versions` reads.

    A killed or losing writer leaves all three: data files it wrote, the deletion files its tasks
    wrote for the rows a merge, delete+insert or snapshot replaces (each task writes its fragment's
    before the one commit), and the index directories it built (an atomic run builds each model's
    indexes before its publish). Only what is old is a candidate,
    and the versions are read newest first until no candidate is left, so a table without leftovers
    is read once. A version that cannot be read (removed meanwhile) stops the sweep: what it reads
    is unknown, so nothing is removed."""
    storage = namespace.storage
    data = {
        relative: entry
        for relative, entry in storage.files(f"{location}/{DATA_DIR}").items()
        if ownership.is_table_file(f"{DATA_DIR}/{relative}") and _older_than(entry, grace)
    }
    deletions = {
        f"{DELETIONS_DIR}/{relative}": entry
        for relative, entry in storage.files(f"{location}/{DELETIONS_DIR}").items()
        if ownership.is_table_file(f"{DELETIONS_DIR}/{relative}") and _older_than(entry, grace)
    }
    indices = {
        _base_name(entry["name"]): entry
        for entry in storage.ls(f"{location}/{INDICES_DIR}")
        if entry.get("type") == "directory"
        and ownership.is_index_dir(f"{INDICES_DIR}/{_base_name(entry['name'])}")
        and _idle(storage, entry, grace)
    }
    for number in sorted(versions, reverse=True):
        if not (data or deletions or indices):
            break
        try:
            dataset = lance.dataset(
                location, version=number, storage_options=namespace.storage_options or None
            )
            for fragment in dataset.get_fragments():
                for data_file in fragment.data_files():
                    data.pop(data_file.path, None)
                deletion_file = fragment.metadata.deletion_file
                if deletion_file is not None:
                    deletions.pop(deletion_file.path(fragment.fragment_id), None)
            for index in dataset.describe_indices():
                for segment in index.segments:
                    indices.pop(segment.uuid, None)
        except (ValueError, OSError):
            return CleanupReport()
    report = CleanupReport()
    for entry in [*data.values(), *deletions.values()]:
        _remove(storage, entry["name"], entry, report)
    for entry in indices.values():
        _remove(storage, entry["name"], entry, report, recursive=True)
    return report


def repair(namespace: DirectoryNamespace) -> CleanupReport:
    """Give every registered view and declared table whose reservation is gone its
    `.lance-reserved` back (roots an older release's cleanup damaged); the engine decides which."""
    return CleanupReport(repaired=namespace.restore_reservations())


def namespace_leftovers(namespace: DirectoryNamespace, grace: timedelta) -> CleanupReport:
    """Root-level leftovers older than `grace`: run scratch dirs and never-published table dirs.

    A directory is a leftover only when no object of the namespace owns it (the engine's
    `registered_locations`: tables, declared tables and views at every level), it holds no
    finalized version (a deregistered table keeps its files on purpose), it is named as the engine
    names a table's directory and everything in it has a Lance table's shape
    (`ownership.foreign_entry`). One never published may be empty but for its `data/` directory
    (a losing run removed its files). A root entry of any other name is someone else's; one named
    like ours but holding other files is kept and reported: removing only its Lance parts would
    take files from whoever put the rest there."""
    storage = namespace.storage
    report = CleanupReport()
    for entry in storage.ls(storage.join(SCRATCH_DIR)):
        if entry.get("type") != "directory":
            continue
        foreign = _scratch_foreign_entry(storage, entry["name"])
        if foreign is not None:
            report.skipped.append(_kept(storage, entry["name"], foreign))
        elif _idle(storage, entry, grace):
            _remove(storage, entry["name"], entry, report, recursive=True)
    storage.remove_if_empty(storage.join(SCRATCH_DIR))  # as a run's own publish or discard does
    owned = set(namespace.registered_locations())
    for entry in storage.ls(storage.root):
        name = _base_name(entry["name"])
        path = storage.join(name)
        if (
            entry.get("type") != "directory"
            or not ownership.is_table_dir_name(name)
            or path in owned
            or has_versions(storage, path)
        ):
            continue
        foreign = ownership.foreign_entry(storage, path)
        if foreign is not None:
            report.skipped.append(_kept(storage, path, foreign))
        elif _idle(storage, entry, grace):
            _remove(storage, path, entry, report, recursive=True)
    return report


def _scratch_foreign_entry(storage: Storage, run_dir: str) -> str | None:
    """What in a scratch directory is no Lance table's: it is one table's directory (a shallow
    clone of schema evolution) or holds only those (an atomic run's copies); None when all is ours."""
    if ownership.foreign_entry(storage, run_dir) is None:
        return None
    for entry in storage.ls(run_dir):
        name = _base_name(entry["name"])
        if entry.get("type") != "directory":
            return name
        foreign = ownership.foreign_entry(storage, entry["name"])
        if foreign is not None:
            return f"{name}/{foreign}"
    return None


def _kept(storage: Storage, path: str, foreign: str) -> str:
    shown = _shown(storage, path)
    return f"{shown}: it looks like a leftover but also holds {foreign}, which no Lance table has"


def table_ids(namespace: DirectoryNamespace, parent: list[str] | None = None) -> Iterator[list[str]]:
    """Every table of the root, depth first."""
    parent = parent or []
    for name in all_pages(namespace.list_tables, parent):
        yield [*parent, name]
    for child in all_pages(namespace.list_namespaces, parent):
        yield from table_ids(namespace, [*parent, child])


def cleanup_namespace(
    namespace: DirectoryNamespace,
    retain_versions: int | None = None,
    older_than: timedelta | None = None,
    grace: timedelta = DEFAULT_GRACE,
    allow_short_grace: bool = False,
) -> CleanupReport:
    """`repair` first (a damaged root is whole again before anything is removed), `cleanup_table`
    for every table of the root, then the root-level leftovers and `__manifest`'s history. A grace
    below `MIN_GRACE` is refused before any of it unless `allow_short_grace` (`check_grace`)."""
    check_grace(grace, allow_short_grace)
    report = repair(namespace)
    for table_id in table_ids(namespace):
        if not namespace.describe_table(table_id).declared_only:
            report.merge(
                cleanup_table(namespace, table_id, retain_versions, older_than, grace, allow_short_grace)
            )
    report.merge(namespace_leftovers(namespace, grace))
    report.merge(manifest_history(namespace, grace))
    return report


def manifest_history(namespace: DirectoryNamespace, grace: timedelta) -> CleanupReport:
    """Versions of the root's `__manifest` table older than `grace`, and the files only they use.

    Every namespace change is one `__manifest` commit, so its versions pile up (hundreds of MB after
    thousands of runs) while nobody reads them: the engine and native readers read its latest
    version. Lance's own cleanup removes them and always keeps the latest; `grace` spares the
    versions a writer that is running now may still build on."""
    storage = namespace.storage
    location = storage.join(MANIFEST_NAME)
    if not has_versions(storage, location):
        return CleanupReport()
    manifest = lance.dataset(location, storage_options=namespace.storage_options or None)
    before = {int(v["version"]) for v in manifest.versions()}
    stats = manifest.cleanup_old_versions(older_than=grace)
    after = {int(v["version"]) for v in manifest.versions()}  # listed from storage again
    removed = sorted(before - after)
    report = CleanupReport(
        versions={MANIFEST_NAME: removed} if removed else {}, bytes_removed=int(stats.bytes_removed)
    )
    # Lance's cleanup removes only files of the versions it removes, never those no version ever
    # referenced: the index an upkeep built and then lost its commit race with (it is skipped,
    # namespace/maintenance.py), a killed writer's data files; they go like a table's
    report.merge(_unreferenced_files(namespace, location, sorted(after), grace))
    return report


# -- file helpers --------------------------------------------------------------------------------------
def _modified(info: dict[str, Any]) -> float | None:
    """Seconds since the epoch a file was last written (local mtime, S3 LastModified)."""
    value = info.get("mtime") or info.get("LastModified") or info.get("last_modified")
    if value is None:
        return None
    return float(value.timestamp()) if hasattr(value, "timestamp") else float(value)


def _older_than(info: dict[str, Any], grace: timedelta) -> bool:
    modified = _modified(info)
    return modified is not None and time.time() - modified > grace.total_seconds()


def _idle(storage: Storage, entry: dict[str, Any], grace: timedelta) -> bool:
    """True when nobody wrote under the directory `entry` within `grace`: every file under it is
    older, or, with no file at all, the directory itself (a writer creates it just before its
    first file; object stores have no empty directories)."""
    files = storage.files(entry["name"])
    if not files:
        return _modified(entry) is None or _older_than(entry, grace)
    return all(_older_than(info, grace) for info in files.values())


def _base_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _remove(
    storage: Storage, path: str, info: dict[str, Any], report: CleanupReport, recursive: bool = False
) -> None:
    size = (
        sum(int(f.get("size") or 0) for f in storage.files(path).values())
        if recursive
        else int(info.get("size") or 0)
    )
    storage.rm(path, recursive=recursive)
    report.leftovers.append(_shown(storage, path))
    report.bytes_removed += size


def _shown(storage: Storage, path: str) -> str:
    """`path` as a report shows it: with the root's scheme (fsspec's listings drop it)."""
    scheme = storage.root.split("://", 1)[0] + "://" if "://" in storage.root else ""
    return path if "://" in path or not scheme else scheme + path


def after_build(
    namespace: DirectoryNamespace, table_id: list[str], config: MaintenanceConfig, properties: dict[str, str]
) -> str:
    """Apply the config to the table's just-built version; returns what was done, for the log."""
    done = []
    fragments = len(latest(namespace, table_id).get_fragments())
    if config.optimize_over_fragments is not None and fragments > config.optimize_over_fragments:
        result = optimize_table(namespace, table_id, properties)
        done.append(f"optimized {result.fragments_before} -> {result.fragments_after} fragments")
    if config.retain_versions is not None or config.older_than_days is not None:
        days = DEFAULT_OLDER_THAN_DAYS if config.older_than_days is None else config.older_than_days
        report = cleanup_table(namespace, table_id, config.retain_versions, timedelta(days=days))
        removed = report.versions.get(".".join(table_id), [])
        if removed:
            done.append(f"removed versions {', '.join(map(str, removed))}")
    return "; ".join(done)
