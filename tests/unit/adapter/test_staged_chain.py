"""Further writes of a table inside one atomic-publish run (`RunPublisher.stage_chained`).

Each write is computed against the run's staged content (a detached version of an existing table,
or a new table's scratch copy), staged after the run's last version of the table and read by the
rest of the run; the publish makes them all visible at once. On local disk and moto S3.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.runtime.staging import SCRATCH_DIR, RunPublisher
from tests.unit.adapter.helpers import namespace_on

TABLE = ["shop", "events"]
WHO = {"dbt_invocation_id": "run"}


@pytest.fixture(params=["local", "s3"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    ns = namespace_on(request, request.param, tmp_path, managed=True)  # staging needs management
    ns.create_namespace(["shop"])
    return ns


def rows(first: int, count: int) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + count), pa.int64())})


def stage_first(ns: DirectoryNamespace, publisher: RunPublisher, data: pa.Table) -> int:
    """The run's first write of the table, staged as a model build stages it."""
    try:
        info = ns.describe_table(TABLE)
        location, read_version = info.location, info.version
    except errors.TableNotFoundError:
        location, read_version = ns.table_location(TABLE), None
    fragments = lance.fragment.write_fragments(data, location, storage_options=ns.storage_options or None)
    operation = (
        lance.LanceOperation.Append(fragments)
        if read_version is not None
        else lance.LanceOperation.Overwrite(data.schema, fragments)
    )
    return publisher.land(ns, TABLE, operation, read_version, WHO, location=location)


def stage_batch(ns: DirectoryNamespace, publisher: RunPublisher, delete: str, data: pa.Table) -> int:
    """A later batch: delete `delete` and append `data`, computed on the run's staged content and
    written where the run reads it, as a microbatch batch does."""
    tip, target = publisher.staged_tip(TABLE), publisher.read_target(TABLE)
    staged = publisher.staged_dataset(ns, TABLE)
    assert tip is not None and target is not None and staged is not None
    updated, removed = [], []
    for fragment in staged.get_fragments():
        metadata = fragment.delete(delete)
        if metadata is None:
            removed.append(fragment.fragment_id)
        elif metadata.deletion_file is not None:
            updated.append(metadata)
    new = lance.fragment.write_fragments(data, target.path, storage_options=ns.storage_options or None)
    operation = lance.LanceOperation.Update(
        removed_fragment_ids=removed, updated_fragments=updated, new_fragments=new
    )
    return publisher.land(ns, TABLE, operation, staged.version, WHO, staged_tip=tip)


def ids(dataset: lance.LanceDataset) -> list[int]:
    return sorted(dataset.to_table(columns=["id"]).column("id").to_pylist())


@pytest.mark.parametrize("existing", [False, True], ids=["new-table", "existing-table"])
def test_later_batches_stage_in_turn_and_publish_together(namespace: DirectoryNamespace, existing) -> None:
    if existing:
        namespace.create_table(TABLE, rows(0, 10))
    published = namespace.describe_table(TABLE).version if existing else 0
    publisher = RunPublisher.start(namespace, "run-1")
    assert stage_first(namespace, publisher, rows(100, 10)) == published + 1
    # the second batch replaces ids 100-104 (part of the first batch's fragment) with 200-204
    assert stage_batch(namespace, publisher, "id >= 100 AND id < 105", rows(200, 5)) == published + 2
    # the third deletes everything the first batch left, removing its fragment
    assert stage_batch(namespace, publisher, "id >= 105 AND id < 200", rows(300, 3)) == published + 3
    expected = [*(range(10) if existing else []), *range(200, 205), *range(300, 303)]
    staged = publisher.staged_dataset(namespace, TABLE)
    assert staged is not None and ids(staged) == expected  # what the rest of the run reads
    if existing:  # namespace readers still see the published version
        assert namespace.describe_table(TABLE).version == published
    else:
        assert not namespace.table_exists(TABLE)

    assert namespace.publish(publisher.staged_commits()) == {tuple(TABLE): published + 3}
    info = namespace.describe_table(TABLE)
    plain = lance.dataset(info.location, storage_options=namespace.storage_options or None)
    assert plain.version == info.version == published + 3
    assert ids(plain) == expected
    for version in range(published + 1, published + 4):  # every batch is a version of its own
        assert namespace.describe_table(TABLE, version=version).version == version


def test_a_batch_computed_on_a_stale_tip_is_refused(namespace: DirectoryNamespace) -> None:
    namespace.create_table(TABLE, rows(0, 10))
    publisher = RunPublisher.start(namespace, "run-1")
    stage_first(namespace, publisher, rows(100, 10))
    stale = publisher.staged_tip(TABLE)
    stage_batch(namespace, publisher, "id = 100", rows(200, 1))
    assert stale is not None and publisher.staged_tip(TABLE) != stale
    operation = lance.LanceOperation.Append([])
    with pytest.raises(errors.ConcurrentModificationError, match="written again in this run"):
        publisher.land(namespace, TABLE, operation, None, WHO, staged_tip=stale)
    assert len(publisher.writes[tuple(TABLE)].chain) == 2  # nothing staged by the refused write


def test_a_discarded_run_removes_the_files_of_every_batch(namespace: DirectoryNamespace) -> None:
    namespace.create_table(TABLE, rows(0, 10))
    location = namespace.describe_table(TABLE).location
    storage = Storage(namespace.root, namespace.storage_options)
    before = set(storage.files(f"{location}/data"))
    publisher = RunPublisher.start(namespace, "run-1")
    stage_first(namespace, publisher, rows(100, 10))
    stage_batch(namespace, publisher, "id < 5", rows(200, 5))
    written = publisher.writes[tuple(TABLE)]
    assert len(set(storage.files(f"{location}/data"))) == len(before) + 2
    for path in (*written.garbage, *written.unpublished_garbage):
        if storage.exists(path):
            storage.rm(path, recursive=True)
    assert set(storage.files(f"{location}/data")) == before
    deletions = f"{location}/_deletions"
    assert not storage.exists(deletions) or not storage.files(deletions)  # the batch's deletion file too
    assert ids(lance.dataset(location, storage_options=namespace.storage_options or None)) == list(range(10))


def test_the_scratch_root_goes_once_no_run_has_a_copy_in_it(namespace: DirectoryNamespace) -> None:
    """`.lancens-staging` is removed with a run's scratch copy unless another run still has one."""
    storage = Storage(namespace.root, namespace.storage_options)
    mine, other = RunPublisher.start(namespace, "run-1"), RunPublisher.start(namespace, "run-2")
    for publisher in (mine, other):
        storage.write_bytes(f"{publisher.scratch}/events/data/a.lance", b"rows")
    scratch_root = storage.join(SCRATCH_DIR)

    storage.rm(mine.scratch, recursive=True)
    storage.remove_if_empty(scratch_root)
    assert list(storage.files(scratch_root)) == ["run-2/events/data/a.lance"]  # the other run's copy

    storage.rm(other.scratch, recursive=True)
    storage.remove_if_empty(scratch_root)
    assert not storage.exists(scratch_root)
