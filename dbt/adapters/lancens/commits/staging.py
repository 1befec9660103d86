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
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.storage import Storage

SCRATCH_DIR = ".lancens-staging"


@dataclass(frozen=True)
class ReadTarget:
    """Where a staged version can be read: a path, and a version there (None: its latest)."""

    path: str
    version: int | None


@dataclass(frozen=True)
class StagedWrite:
    """One staged version, where the run reads it, and the files to delete once published or discarded."""

    staged: StagedCommit
    read: ReadTarget
    garbage: list[str] = field(default_factory=list)


@dataclass
class RunPublisher:
    """The staged writes of one dbt invocation in this process (held by the runtime)."""

    run_id: str
    scratch: str
    writes: dict[tuple[str, ...], StagedWrite] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(cls, namespace: DirectoryNamespace, run_id: str) -> RunPublisher:
        return cls(run_id, f"{namespace.root.rstrip('/')}/{SCRATCH_DIR}/{run_id}")

    def claim(self, table_id: Sequence[str]) -> None:
        """One staged version per table per run: a second would build on a version nobody sees."""
        with self.lock:
            if tuple(table_id) in self.writes:
                raise errors.InvalidInputError(
                    f"atomic publish: {'.'.join(table_id)} was already written in this run"
                )

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
        return written.staged.version


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
        detached = lance.LanceDataset.commit(
            location,
            lance.Transaction(read_version, operation, transaction_properties=properties),
            detached=True,
            storage_options=options,
        )
        manifest = f"{location.rstrip('/')}/_versions/d{detached.version}.manifest"
        return StagedWrite(staged, ReadTarget(location, detached.version), [manifest, staged.manifest_path])
    copy = f"{scratch.rstrip('/')}/{staged.location.rstrip('/').rsplit('/', 1)[-1]}"
    storage = Storage(namespace.root, namespace.storage_options)
    for fragment in getattr(operation, "fragments", []):
        for data_file in fragment.data_files():
            storage.copy(f"{location.rstrip('/')}/data/{data_file.path}", f"{copy}/data/{data_file.path}")
    lance.LanceDataset.commit(copy, operation, storage_options=options)
    return StagedWrite(staged, ReadTarget(copy, None), [copy, staged.manifest_path])
