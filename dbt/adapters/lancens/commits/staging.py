"""Staged writes of an atomic-publish run: a version nobody outside the run sees, readable inside it.

A write of such a run does not commit; it stages (`ns.stage_table_commit`: data files and a staged
manifest, no `__manifest` row), and `publish.py` makes every staged version of the run visible in
one `__manifest` commit at its end. Models later in the same run must still read the new data, so
each staged write also gets a version the `lance` data source can open:

* an existing table: the same transaction committed *detached* at the table's location. A detached
  version is readable by its (high-bit) number but is never the latest, and the engine ignores its
  manifest name, so plain Lance readers and the namespace keep seeing the published history;
* a new table: Lance cannot make a dataset's first version detached, so its data files are copied
  to a scratch dataset under `<root>/.lancens-staging/<run>/`, outside every table directory.

The Spark data source calls `commit` (our commit hook) in a driver-side Python worker, not in the
dbt process, so the result travels back as a JSON record in the run's local staging directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import lance

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.commit import StagedCommit
from dbt.adapters.lancens.namespace.storage import Storage

HOOK = "dbt.adapters.lancens.commits.staging:commit"
SCRATCH_DIR = ".lancens-staging"


@dataclass(frozen=True)
class StagedWrite:
    """One staged version, where the run reads it, and the files to delete once published or discarded."""

    staged: StagedCommit
    read_path: str
    read_version: int | None
    garbage: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> StagedWrite:
        data = json.loads(text)
        return cls(StagedCommit(**data["staged"]), data["read_path"], data["read_version"], data["garbage"])


def scratch_root(namespace: DirectoryNamespace, run_id: str) -> str:
    return f"{namespace.root.rstrip('/')}/{SCRATCH_DIR}/{run_id}"


def stage(
    namespace: DirectoryNamespace,
    table_id: list[str],
    operation: Any,
    read_version: int | None,
    properties: dict[str, str],
    location: str,
    scratch: str,
) -> StagedWrite:
    """Stage `operation` on the table and make the staged content readable for the rest of the run."""
    try:
        info = namespace.describe_table(table_id)
    except errors.TableNotFoundError:
        info = None
    has_data = info is not None and not info.declared_only
    if has_data and read_version is None:
        read_version = info.version
    staged = namespace.stage_table_commit(
        table_id,
        operation,
        read_version=read_version,
        transaction_properties=properties,
        location=location if info is None else None,
    )
    options = namespace.storage_options or None
    if has_data:
        detached = lance.LanceDataset.commit(
            location,
            lance.Transaction(read_version, operation, transaction_properties=properties),
            detached=True,
            storage_options=options,
        )
        manifest = f"{location.rstrip('/')}/_versions/d{detached.version}.manifest"
        return StagedWrite(staged, location, detached.version, [manifest, staged.manifest_path])
    copy = f"{scratch.rstrip('/')}/{staged.location.rstrip('/').rsplit('/', 1)[-1]}"
    storage = Storage(namespace.root, namespace.storage_options)
    for fragment in operation.fragments:
        for data_file in fragment.data_files():
            storage.copy(f"{location.rstrip('/')}/data/{data_file.path}", f"{copy}/data/{data_file.path}")
    lance.LanceDataset.commit(copy, operation, storage_options=options)
    return StagedWrite(staged, copy, None, [copy, staged.manifest_path])


def commit(
    uri: str, operation: Any, read_version: int | None, storage_options: dict[str, str], args: dict[str, Any]
) -> int:
    """Commit hook of the `lance` data source for atomic-publish runs: stage, record, return the version."""
    namespace = DirectoryNamespace.from_properties(args["namespace"])
    written = stage(
        namespace,
        args["table_id"],
        operation,
        read_version,
        args["transaction_properties"],
        uri,
        args["scratch"],
    )
    write_record(args["record"], written)
    return written.staged.version


def write_record(path: str, written: StagedWrite) -> None:
    """Atomically leave the staged write where the dbt process looks for it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(f"{path}.tmp", "w") as handle:
        handle.write(written.to_json())
    os.replace(f"{path}.tmp", path)


def read_record(path: str) -> StagedWrite:
    with open(path) as handle:
        return StagedWrite.from_json(handle.read())
