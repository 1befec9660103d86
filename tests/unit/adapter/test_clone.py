"""Zero-copy clone on a real namespace (local disk with and without table version management, moto
S3): the clone reads the source's data files, copies none, and writes only under its own location."""

from __future__ import annotations

from datetime import timedelta

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.materializations.clone import shallow_clone
from dbt.adapters.lancens.metadata import clone_holds, maintenance
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors
from dbt.adapters.lancens.namespace.storage import Storage
from dbt.adapters.lancens.namespace.versions import TVM_KEY

SOURCE = ["prod", "orders"]
CLONE = ["dev", "orders"]


@pytest.fixture(params=["local", "local-managed", "s3", "s3-managed"])
def namespace(request: pytest.FixtureRequest, tmp_path) -> DirectoryNamespace:
    if request.param.startswith("local"):
        ns = DirectoryNamespace(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        ns = DirectoryNamespace(s3.uri(f"clone/{tmp_path.name}"), storage_options=s3.storage_options)
    if request.param.endswith("managed"):
        ns.alter_namespace_properties([], {TVM_KEY: "true"})
    ns.create_namespace(["prod"])
    ns.create_namespace(["dev"])
    ns.create_table(SOURCE, pa.table({"id": pa.array(range(10), pa.int64())}))
    return ns


def files_under(ns: DirectoryNamespace, location: str) -> list[str]:
    storage = Storage(ns.root, ns.storage_options)
    try:
        return sorted(storage.fs.find(location))
    except FileNotFoundError:
        return []


def dataset(ns: DirectoryNamespace, table: list[str]) -> lance.LanceDataset:
    return lance.dataset(ns.describe_table(table).location, storage_options=ns.storage_options or None)


def test_clone_shares_the_source_files_and_writes_its_own(namespace: DirectoryNamespace) -> None:
    source = namespace.describe_table(SOURCE)
    source_files = files_under(namespace, source.location)

    shallow_clone(namespace, SOURCE, CLONE)

    clone = namespace.describe_table(CLONE)
    assert clone.location != source.location and not clone.declared_only
    assert not [f for f in files_under(namespace, clone.location) if "/data/" in f]  # no data file copied
    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == list(range(10))

    # writes to the clone: an append, a delete, then a cleanup of the clone's old versions
    options = namespace.storage_options or None
    fragments = lance.fragment.write_fragments(
        pa.table({"id": pa.array([100], pa.int64())}), clone.location, storage_options=options
    )
    namespace.commit_table(CLONE, lance.LanceOperation.Append(fragments), read_version=clone.version)
    dataset(namespace, CLONE).delete("id < 5")
    maintenance.cleanup_table(
        namespace,
        CLONE,
        retain_versions=1,
        older_than=timedelta(0),
        grace=timedelta(0),
        allow_short_grace=True,
    )

    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == [5, 6, 7, 8, 9, 100]
    # the source is untouched but for the clone's hold tag
    assert [f for f in files_under(namespace, source.location) if "/_refs/" not in f] == source_files
    assert list(dataset(namespace, SOURCE).tags.list()) == [clone_holds.hold_tag(CLONE)]
    assert dataset(namespace, SOURCE).version == source.version
    assert sorted(dataset(namespace, SOURCE).to_table()["id"].to_pylist()) == list(range(10))


def test_clone_replaces_an_existing_target_and_refuses_itself(namespace: DirectoryNamespace) -> None:
    namespace.create_table(CLONE, pa.table({"other": pa.array(["x"])}))
    shallow_clone(namespace, SOURCE, CLONE)
    assert dataset(namespace, CLONE).schema.names == ["id"]
    with pytest.raises(errors.InvalidInputError, match="onto itself"):
        shallow_clone(namespace, SOURCE, SOURCE)
    with pytest.raises(errors.TableNotFoundError):
        shallow_clone(namespace, ["prod", "missing"], ["dev", "missing"])
    assert not namespace.table_exists(["dev", "missing"])


def overwrite(ns: DirectoryNamespace, table: list[str], ids: list[int]) -> None:
    """A full rebuild, as a table model's `dbt run` commits it (Lance Overwrite, history kept)."""
    info = ns.describe_table(table)
    rows = pa.table({"id": pa.array(ids, pa.int64())})
    options = ns.storage_options or None
    fragments = lance.fragment.write_fragments(rows, info.location, storage_options=options)
    ns.commit_table(table, lance.LanceOperation.Overwrite(rows.schema, fragments), read_version=info.version)


def cleanup(ns: DirectoryNamespace, table: list[str]) -> None:
    maintenance.cleanup_table(
        ns, table, retain_versions=1, older_than=timedelta(0), grace=timedelta(0), allow_short_grace=True
    )


def test_clone_holds_its_source_version_through_cleanup_and_purge(namespace: DirectoryNamespace) -> None:
    cloned = namespace.describe_table(SOURCE).version
    shallow_clone(namespace, SOURCE, CLONE)
    assert dataset(namespace, SOURCE).tags.list()[clone_holds.hold_tag(CLONE)]["version"] == cloned

    overwrite(namespace, SOURCE, [42])
    cleanup(namespace, SOURCE)  # what lance_maintenance {retain_versions: 1} does after a build
    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == list(range(10))
    assert cloned in {v["version"] for v in dataset(namespace, SOURCE).versions()}

    with pytest.raises(clone_holds.CloneHoldError, match=r"cannot purge prod\.orders: .*dev\.orders"):
        clone_holds.purge(namespace, SOURCE)
    assert sorted(dataset(namespace, CLONE).to_table()["id"].to_pylist()) == list(range(10))

    clone_holds.purge(namespace, CLONE)  # the clone's hold goes with it; the source stays whole
    assert clone_holds.hold_tag(CLONE) not in dataset(namespace, SOURCE).tags.list()
    assert dataset(namespace, SOURCE).to_table()["id"].to_pylist() == [42]
    cleanup(namespace, SOURCE)
    assert [v["version"] for v in dataset(namespace, SOURCE).versions()] == [cloned + 1]
    clone_holds.purge(namespace, SOURCE)
    assert not namespace.table_exists(SOURCE)


def test_a_rebuilt_clone_lets_go_once_its_old_versions_are_cleaned(namespace: DirectoryNamespace) -> None:
    shallow_clone(namespace, SOURCE, CLONE)
    overwrite(namespace, CLONE, [7])  # `dbt run` rebuilt the clone as a real table
    cleanup(namespace, SOURCE)
    assert clone_holds.hold_tag(CLONE) in dataset(namespace, SOURCE).tags.list()  # clone v1 reads it

    cleanup(namespace, CLONE)
    assert clone_holds.hold_tag(CLONE) not in dataset(namespace, SOURCE).tags.list()
    assert dataset(namespace, CLONE).to_table()["id"].to_pylist() == [7]


def test_a_hold_whose_clone_was_dropped_elsewhere_goes_with_the_next_cleanup(
    namespace: DirectoryNamespace,
) -> None:
    shallow_clone(namespace, SOURCE, CLONE)
    overwrite(namespace, SOURCE, [42])
    namespace.drop_table(CLONE)  # by another tool: the hold stays behind
    assert clone_holds.hold_tag(CLONE) in dataset(namespace, SOURCE).tags.list()

    maintenance.cleanup_table(namespace, SOURCE, retain_versions=1, older_than=timedelta(0))
    assert clone_holds.hold_tag(CLONE) in dataset(namespace, SOURCE).tags.list()  # younger than 24 h
    cleanup(namespace, SOURCE)
    assert dataset(namespace, SOURCE).tags.list() == {}
    assert len(dataset(namespace, SOURCE).versions()) == 1


def test_re_cloning_moves_the_hold_to_the_new_source_version(namespace: DirectoryNamespace) -> None:
    shallow_clone(namespace, SOURCE, CLONE)
    overwrite(namespace, SOURCE, [42])
    shallow_clone(namespace, SOURCE, CLONE)
    latest = namespace.describe_table(SOURCE).version
    assert {t: v["version"] for t, v in dataset(namespace, SOURCE).tags.list().items()} == {
        clone_holds.hold_tag(CLONE): latest
    }
    assert dataset(namespace, CLONE).to_table()["id"].to_pylist() == [42]


@pytest.mark.parametrize(
    "clone_id", [["dev", "orders"], ["dev_1", "a.b"], ["x", "y", "lock"], ["ü ber", "_", "-a$"[:2]]]
)
def test_hold_tags_name_the_clone_exactly(clone_id: list[str], tmp_path) -> None:
    tag = clone_holds.hold_tag(clone_id)
    assert clone_holds.clone_of(tag) == clone_id
    table = lance.write_dataset(pa.table({"id": [1]}), str(tmp_path / "t"))
    table.tags.create(tag, 1)  # a name Lance accepts
    assert clone_holds.clone_of("release") is None
    for hand_made in ("lancens-clone.a_b.held", "lancens-clone.a_zz_.held", "lancens-clone.a_.held"):
        assert clone_holds.clone_of(hand_made) is None  # not ours: skipped, never an error


def test_dropping_many_tables_drops_clones_before_their_sources(namespace: DirectoryNamespace) -> None:
    shallow_clone(namespace, SOURCE, CLONE)
    with pytest.raises(clone_holds.CloneHoldError, match=r"dev\.orders"):
        clone_holds.purge_all(namespace, [SOURCE])
    assert namespace.table_exists(SOURCE) and namespace.table_exists(CLONE)  # refused before any drop

    clone_holds.purge_all(namespace, [SOURCE, CLONE])
    assert not namespace.table_exists(SOURCE) and not namespace.table_exists(CLONE)
