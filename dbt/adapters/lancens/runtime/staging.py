"""Staged writes of an atomic-publish run: versions nobody outside the run sees, readable inside it.

A write of such a run does not commit; it stages (`ns.stage_table_commit`: data files and a staged
manifest, no `__manifest` row), and `publish.finish` makes every staged version of the run visible
in one `__manifest` commit at its end. Models later in the same run must still read the new data,
so each staged write also gets a version the `lance` data source can open:

* an existing table: the same transaction committed *detached* at the table's location. A detached
  version is readable by its (high-bit) number but is never the latest, and the engine ignores its
  manifest name, so plain Lance readers and the namespace keep seeing the published history;
* a new table: Lance cannot make a dataset's first version detached, so its data files are copied
  to a scratch dataset under `<root>/.lancens-staging/<run>/`, outside every table directory.

Everything happens in the dbt process: Spark tasks only write data files (`commits.writes`).

Nothing of a run outlives it but what it publishes: a detached version's manifest and transaction
file are never part of the published history and go when the run ends; the staged versions'
transaction files go with their manifests when the run publishes nothing (`unpublished_files`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import lance
from lance.dataset import Index
from lance.fragment import FragmentMetadata

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.layout import (
    INDICES_DIR,
    TRANSACTIONS_DIR,
    detached_manifest_path,
    transaction_file_path,
    transaction_file_suffix,
)
from dbt.adapters.lancens.namespace.models import TableInfo, ViewInfo
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.table_ops import metadata_update
from dbt.adapters.lancens.runtime.landing import IndexTarget, ReadTarget, latest

SCRATCH_DIR = ".lancens-staging"


@dataclass(frozen=True)
class StagedWrite:
    """The run's staged versions of one table (its write, then what must become visible with it:
    the indexes built on the new rows), where the run reads them, and the files to delete."""

    chain: tuple[StagedCommit, ...]
    read: ReadTarget
    garbage: tuple[str, ...] = ()  # never part of a version: deleted once published or discarded
    # deleted only when the run publishes nothing (a published version may need any of them: the
    # engine removes a staged manifest itself once the version is finished)
    unpublished_garbage: tuple[str, ...] = ()

    @property
    def first(self) -> StagedCommit:
        return self.chain[0]


@dataclass
class RunPublisher:
    """The staged writes of one dbt invocation in this process (held by the runtime), and the
    `Landing` of its writes: each stages, nothing is visible before the run publishes."""

    visible_at_once = False

    run_id: str
    scratch: str
    writes: dict[tuple[str, ...], StagedWrite] = field(default_factory=dict)
    # What to do once the run has published a table (a staged model's `lance_maintenance`); dropped
    # with the run when it publishes nothing.
    after_publish: dict[tuple[str, ...], list[Callable[[], object]]] = field(default_factory=dict)
    # The views the run created or replaced: held back and created in the publish commit, so a
    # view never appears without the new tables it reads (or at all, when the run publishes nothing).
    views: dict[tuple[str, ...], ViewInfo] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(cls, namespace: DirectoryNamespace, run_id: str) -> RunPublisher:
        return cls(run_id, f"{namespace.root.rstrip('/')}/{SCRATCH_DIR}/{run_id}")

    def claim(self, table_id: Sequence[str]) -> None:
        """Refuse the run's first write of a table when another write of the run staged it meanwhile:
        a later write must build on the run's staged content (`stage_chained`), not on the
        published version."""
        with self.lock:
            if tuple(table_id) in self.writes:
                raise errors.ConcurrentModificationError(
                    f"atomic publish: {'.'.join(table_id)} was staged by another write of this run "
                    "while this write was in progress"
                )

    def write_target(
        self, namespace: DirectoryNamespace, table_id: Sequence[str], info: TableInfo
    ) -> TableInfo:
        return info  # the table itself: the run stages its versions

    def objects(self) -> list[tuple[str, ...]]:
        """The ids of every table and view the run staged or held."""
        with self.lock:
            return [*self.writes, *self.views]

    def hold_view(self, view: ViewInfo) -> None:
        """Create or replace `view` when the run publishes (its latest definition wins)."""
        with self.lock:
            self.views[tuple(view.id)] = view

    def held_view(self, view_id: Sequence[str]) -> ViewInfo | None:
        """The run's definition of the view, or None when the run holds none."""
        with self.lock:
            return self.views.get(tuple(view_id))

    def defer(self, table_id: Sequence[str], action: Callable[[], object]) -> None:
        """Run `action` once this run has published the table (`publish.finish`), never otherwise."""
        with self.lock:
            self.after_publish.setdefault(tuple(table_id), []).append(action)

    def read_target(self, table_id: Sequence[str]) -> ReadTarget | None:
        """Where the run reads the table it staged, or None when it staged nothing for it."""
        with self.lock:
            written = self.writes.get(tuple(table_id))
        return written.read if written is not None else None

    def stage(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        read_version: int | None,
        properties: dict[str, str],
        location: str,
    ) -> int:
        """Stage `operation` as the run's version of the table; returns the version it gets when the
        run publishes. The staged content is readable by the rest of the run (`read_target`)."""
        self.claim(table_id)
        written = _stage(
            namespace, list(table_id), operation, read_version, properties, location, self.scratch
        )
        with self.lock:
            self.writes[tuple(table_id)] = written
        return written.first.version

    def stage_next(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        properties: dict[str, str],
        files: Sequence[str] = (),
    ) -> int:
        """Stage `operation` on top of the run's last staged version of the table, published with
        it (an index of the new rows). `files`: what the operation's transaction references that
        was written for it (index files), removed if the run publishes nothing. Returns the version."""
        key = tuple(table_id)
        with self.lock:
            written = self.writes[key]
        staged = namespace.stage_next_commit(written.chain[-1], operation, properties)
        with self.lock:
            self.writes[key] = replace(
                written,
                chain=(*written.chain, staged),
                unpublished_garbage=(*written.unpublished_garbage, staged.manifest_path),
            )
        self.discard_unpublished(key, files)
        return staged.version

    def stage_chained(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        operation: lance.LanceOperation.BaseOperation,
        properties: dict[str, str],
        based_on: StagedCommit,
    ) -> int:
        """Stage a further write of a table this run already wrote (each batch of a microbatch
        model after its first): `operation`, computed against the run's staged content
        (`staged_dataset`, files written at its `read_target`), becomes the version after `based_on`
        and what the rest of the run reads. Returns the version it gets when the run publishes.

        `based_on` is the table's last staged version when the write began: another write staged in
        between would make `operation` stale, so that fails (14) instead of losing its rows. The
        staged version is written before the readable copy moves on, and removed if that fails, so
        the two never disagree. The run's lock is held throughout (two commits, milliseconds)."""
        key = tuple(table_id)
        with self.lock:
            written = self.writes[key]
            if written.chain[-1] != based_on:
                raise errors.ConcurrentModificationError(
                    f"atomic publish: {'.'.join(table_id)} was written again in this run while this "
                    "write was in progress"
                )
            read, location = written.read, written.first.location.rstrip("/")
            options = namespace.storage_options or None
            base = lance.dataset(read.path, version=read.version, storage_options=options)
            new_files = _new_files(operation, base)
            storage = namespace.storage
            detached = read.version is not None  # an existing table; else a new table's scratch copy
            if not detached:  # the write's files went to the scratch copy: the table needs them too
                for relative in new_files:
                    storage.copy(f"{read.path.rstrip('/')}/{relative}", f"{location}/{relative}")
            staged = namespace.stage_next_commit(based_on, operation, properties)
            try:  # then move the run's readable copy on; if that fails, the staged version goes too
                transaction = lance.Transaction(base.version, operation, transaction_properties=properties)
                moved = lance.LanceDataset.commit(
                    read.path, transaction, detached=detached, storage_options=options
                )
            except BaseException:
                storage.rm(staged.manifest_path)
                raise
            if detached:  # a new detached version at the table's own location
                garbage = [
                    detached_manifest_path(read.path, moved.version),
                    transaction_file_path(read.path, transaction.read_version, transaction.uuid),
                ]
                next_read = ReadTarget(read.path, moved.version)
            else:  # the scratch copy's next version, its latest
                garbage, next_read = [], read
            self.writes[key] = replace(
                written,
                chain=(*written.chain, staged),
                read=next_read,
                garbage=(*written.garbage, *garbage),
                unpublished_garbage=(
                    *written.unpublished_garbage,
                    staged.manifest_path,
                    *(f"{location}/{relative}" for relative in new_files),
                ),
            )
        return staged.version

    def staged_dataset(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> lance.LanceDataset | None:
        """The run's staged content of the table, opened where the run reads it (None: not staged)."""
        target = self.read_target(table_id)
        if target is None:
            return None
        return lance.dataset(
            target.path,
            version=target.version,
            storage_options=namespace.storage_options or None,
            session=namespace.lance_session,
        )

    def staged_tip(self, table_id: Sequence[str]) -> StagedCommit | None:
        """The run's last staged version of the table, or None when it staged nothing for it."""
        with self.lock:
            written = self.writes.get(tuple(table_id))
        return written.chain[-1] if written is not None else None

    def discard_unpublished(self, table_id: Sequence[str], files: Sequence[str]) -> None:
        """Remove `files` (written for the table's staged versions) if the run publishes nothing."""
        key = tuple(table_id)
        with self.lock:
            written = self.writes[key]
            self.writes[key] = replace(written, unpublished_garbage=(*written.unpublished_garbage, *files))

    def staged_commits(self) -> list[StagedCommit]:
        """Every staged version of the run, each table's in order (what `publish` takes)."""
        with self.lock:
            return [commit for written in self.writes.values() for commit in written.chain]

    # -- the run's `Landing` (runtime/landing.py): what its writes do instead of committing ---------
    def version_read(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> int | None:
        """None: the run reads its staged versions, and the publish checks them (12)."""
        return None

    def reserve(
        self, namespace: DirectoryNamespace, table_id: Sequence[str]
    ) -> tuple[TableInfo | None, bool]:
        """Nothing: a new table gets a location of its own, declared when the run publishes."""
        return None, False

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
        """Staged as the run's next version of the table: on top of `staged_tip` (a further write
        of a table the run wrote, `stage_chained`), else as its first (`stage`), whose files'
        `location` travels with it (a new table has no row yet)."""
        if staged_tip is not None:
            return self.stage_chained(namespace, table_id, operation, properties, staged_tip)
        if location is None:
            raise ValueError("a staged write needs the location its data files were written to")
        return self.stage(namespace, table_id, operation, read_version, properties, location)

    def index_target(self, namespace: DirectoryNamespace, table_id: Sequence[str]) -> IndexTarget | None:
        """The run's staged version of the table, read where the run reads it; a table the run has
        not written (nothing else stages it) gets its index changes staged on its latest published
        version, as the run's version of that table. Never optimised: Lance's `optimize_indices`
        has no uncommitted form, so an index missing rows is rebuilt on all of them."""
        tip, read = self.staged_tip(table_id), self.read_target(table_id)
        staged = self.staged_dataset(namespace, table_id)
        if tip is not None and read is not None and staged is not None:
            return IndexTarget(
                staged, tip.location.rstrip("/"), read.path.rstrip("/"), tip.version, optimizes=False
            )
        with namespace.consistent_reads():  # "exists?" and the latest version: one catalog check
            if not namespace.table_exists(list(table_id)):
                return None
            dataset = latest(namespace, table_id)
            location = namespace.describe_table(list(table_id)).location.rstrip("/")
        return IndexTarget(dataset, location, location, dataset.version, optimizes=False)

    def adopt_index(
        self, namespace: DirectoryNamespace, target: IndexTarget, index: Index
    ) -> tuple[Index, list[str]]:
        """A new table's staged rows are read from a scratch copy, where its index was built: the
        index files are copied to the table. Either way the index names the staged version it
        covers (the copy's version numbers are not the table's)."""
        destination = f"{target.location}/{INDICES_DIR}/{index.uuid}"
        source = f"{target.read_path}/{INDICES_DIR}/{index.uuid}"
        if source != destination:
            storage = namespace.storage
            for relative in storage.files(source):
                storage.copy(f"{source}/{relative}", f"{destination}/{relative}")
        return dataclasses.replace(index, dataset_version=target.version), [destination]

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
        """Staged on top of the run's last version of the table, so the indexes become visible in
        the run's one publish commit together with the rows they index, or not at all."""
        if self.staged_tip(table_id) is None:
            version = self.stage(namespace, table_id, operation, read_version, properties, target.location)
            self.discard_unpublished(table_id, files)
            return version
        return self.stage_next(namespace, table_id, operation, properties, files)

    def record_view(self, namespace: DirectoryNamespace, view: ViewInfo) -> None:
        """Held back (`hold_view`): Spark's session has the view already; its row waits for the
        publish, so it never names a table that was not published."""
        self.hold_view(view)

    def update_metadata(
        self,
        namespace: DirectoryNamespace,
        table_id: Sequence[str],
        table_metadata: Mapping[str, str | None] | None,
        field_metadata: Mapping[str, Mapping[str, str | None]] | None,
        table_name: str,
    ) -> None:
        """Staged on top of the run's version of the table, so it is published with its rows; a
        table the run did not write is changed at once (there are no rows to wait for)."""
        staged = self.staged_dataset(namespace, table_id)
        if staged is None:
            namespace.update_table_metadata(list(table_id), table_metadata, field_metadata)
            return
        operation = metadata_update(staged, table_metadata, field_metadata, table_name)
        self.stage_next(namespace, table_id, operation, {})

    def when_published(self, table_id: Sequence[str], action: Callable[[], str]) -> str:
        """Deferred (`defer`): runs once the run has published the table, and never otherwise."""
        self.defer(table_id, action)
        return "once the run publishes"


def unpublished_files(storage: Storage, written: StagedWrite) -> list[str]:
    """The files of a table's staged versions that only publishing would make part of its history:
    the data and index files its writes added, and the staged versions' transaction files (found by
    their transaction's uuid, since Lance names them after the version they were built on)."""
    files = list(written.unpublished_garbage)
    suffixes = tuple(
        transaction_file_suffix(commit.transaction_uuid)
        for commit in written.chain
        if commit.transaction_uuid
    )
    if suffixes:  # one listing: a failed backfill's chain may hold hundreds of staged versions
        directory = f"{written.first.location.rstrip('/')}/{TRANSACTIONS_DIR}"
        files.extend(f"{directory}/{name}" for name in storage.names(directory) if name.endswith(suffixes))
    return files


def _new_files(operation: lance.LanceOperation.BaseOperation, base: lance.LanceDataset | None) -> list[str]:
    """The files `operation` references that `base` (the version it was computed against) does not:
    what this write added, relative to the table (data files and deletion files). A `Merge` lists
    every fragment and an `Update` may keep a fragment's old deletion file, so only the difference
    tells which files a discarded run may delete."""
    if isinstance(operation, lance.LanceOperation.Update):
        fragments = [*operation.new_fragments, *operation.updated_fragments]
    else:
        fragments = list(getattr(operation, "fragments", []))
    known = _files_of([fragment.metadata for fragment in base.get_fragments()]) if base is not None else set()
    return sorted(_files_of(fragments) - known)


def _files_of(fragments: Sequence[FragmentMetadata]) -> set[str]:
    files = {f"data/{data_file.path}" for fragment in fragments for data_file in fragment.data_files()}
    for fragment in fragments:
        if fragment.deletion_file is not None:
            files.add(fragment.deletion_file.path(fragment.id))
    return files


def _stage(
    namespace: DirectoryNamespace,
    table_id: list[str],
    operation: lance.LanceOperation.BaseOperation,
    read_version: int | None,
    properties: dict[str, str],
    location: str,
    scratch: str,
) -> StagedWrite:
    try:
        info = namespace.describe_table(table_id)
    except errors.TableNotFoundError:
        info = None
    if info is not None and info.location.rstrip("/") != location.rstrip("/"):
        # The write began on a table nobody had (its files went to a location of its own) and
        # another writer created the table meanwhile: the files cannot become its version.
        raise errors.ConcurrentModificationError(
            f"atomic publish: another run created {'.'.join(table_id)} while this run was building "
            "it; nothing of this run will be published: run it again"
        )
    if info is not None and not info.declared_only and read_version is None:
        read_version = info.version
    staged = namespace.stage_table_commit(
        table_id,
        operation,
        read_version=read_version,
        transaction_properties=properties,
        location=location if info is None else None,
    )
    options = namespace.storage_options or None
    if info is not None and not info.declared_only and read_version is not None:
        transaction = lance.Transaction(read_version, operation, transaction_properties=properties)
        detached = lance.LanceDataset.commit(location, transaction, detached=True, storage_options=options)
        read = ReadTarget(location, detached.version)
        base = lance.dataset(location, version=read_version, storage_options=options)
        written = tuple(f"{location.rstrip('/')}/{relative}" for relative in _new_files(operation, base))
        # a detached commit is never rebased, so its transaction file keeps its read version's name
        garbage = (
            detached_manifest_path(location, detached.version),
            transaction_file_path(location, read_version, transaction.uuid),
        )
        return StagedWrite((staged,), read, garbage, (staged.manifest_path, *written))
    copy = f"{scratch.rstrip('/')}/{staged.location.rstrip('/').rsplit('/', 1)[-1]}"
    storage = namespace.storage
    for relative in _new_files(operation, None):  # a new table: every file the operation references
        storage.copy(f"{location.rstrip('/')}/{relative}", f"{copy}/{relative}")
    lance.LanceDataset.commit(copy, operation, storage_options=options)
    return StagedWrite((staged,), ReadTarget(copy, None), (copy,), (staged.manifest_path,))
