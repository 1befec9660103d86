"""``commit_table`` and ``restore_table``: Lance transactions committed through the namespace."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

T = ["ns", "t"]
WHO = {"invocation_id": "inv-1", "model": "model.proj.t", "run_started_at": "2025-01-01T00:00:00Z"}


def _rows(start: int, count: int = 3) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + count), pa.int64())})


def create(
    ns: DirectoryNamespace, table_id: list[str], data: pa.Table, properties: dict | None = None
) -> int:
    """First commit of a new table: fragments go to the location the commit is then told about."""
    location = ns.table_location(table_id)
    fragments = lance.fragment.write_fragments(data, location)
    operation = lance.LanceOperation.Overwrite(data.schema, fragments)
    return ns.commit_table(table_id, operation, None, properties, location=location)


def overwrite(ns: DirectoryNamespace, table_id: list[str], data: pa.Table) -> lance.LanceOperation.Overwrite:
    return lance.LanceOperation.Overwrite(
        data.schema, lance.fragment.write_fragments(data, ns.table_location(table_id))
    )


def append_op(ns: DirectoryNamespace, table_id: list[str], data: pa.Table) -> lance.LanceOperation.Append:
    return lance.LanceOperation.Append(lance.fragment.write_fragments(data, ns.table_location(table_id)))


@pytest.fixture(params=["files", "managed"])
def ns(request: pytest.FixtureRequest, tmp_path: Path) -> DirectoryNamespace:
    namespace = DirectoryNamespace(str(tmp_path / "root"))
    namespace.create_namespace(["ns"])
    if request.param == "managed":
        namespace._context.manifest.set_metadata({"table_version_management": "true"})
    return namespace


def content(ns: DirectoryNamespace, table_id: list[str], version: int | None = None) -> list[int]:
    dataset = lance.dataset(ns.describe_table(table_id).location, version=version)
    return sorted(dataset.to_table().column("id").to_pylist())


def test_first_commit_creates_and_registers_the_table(ns: DirectoryNamespace) -> None:
    assert create(ns, T, _rows(0), WHO) == 1
    info = ns.describe_table(T)
    assert info.version == 1 and not info.declared_only
    assert ns._context.manifest.get("ns$t")["object_type"] == "table"
    assert content(ns, T) == [0, 1, 2]
    assert ns.describe_table_version(T, 1).metadata == WHO
    assert ns.describe_table_version(T).version == 1  # no version: the latest (spec)


def test_location_of_an_existing_table_must_match(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    with pytest.raises(errors.InvalidInputError):
        ns.commit_table(T, append_op(ns, T, _rows(3)), 1, location=ns.table_location(["ns", "other"]))


def test_update_table_metadata_is_one_version(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    version = ns.update_table_metadata(T, {"comment": "orders", "owner": "bi"}, {"id": {"doc": "the id"}})
    assert version == 2
    info = ns.describe_table(T)
    assert info.version == 2 and info.properties == {"comment": "orders", "owner": "bi"}
    assert info.schema.field("id").metadata == {b"doc": b"the id"}
    assert [v.version for v in ns.list_table_versions(T).items] == [1, 2]
    assert content(ns, T) == [0, 1, 2]
    assert ns.update_table_metadata(T, {"owner": None}) == 3
    assert ns.describe_table(T).properties == {"comment": "orders"}
    with pytest.raises(errors.InvalidInputError):
        ns.update_table_metadata(T, field_metadata={"nope": {"doc": "x"}})
    ns.declare_table(["ns", "d"])
    with pytest.raises(errors.InvalidInputError):
        ns.update_table_metadata(["ns", "d"], {"comment": "x"})


def test_set_table_properties_writes_both_places(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    ns.set_table_properties(T, {"a": "1"})
    info = ns.set_table_properties(T, {"b": 2})
    assert info.properties == {"a": "1", "b": "2"} and info.version == 3
    assert lance.dataset(info.location).metadata == {"a": "1", "b": "2"}
    assert DirectoryNamespace(ns.root)._context.manifest.get("ns$t")["metadata"] == '{"a":"1","b":"2"}'
    ns.declare_table(["ns", "d"])
    assert ns.set_table_properties(["ns", "d"], {"c": "3"}).properties == {"c": "3"}
    with pytest.raises(errors.InvalidInputError):
        ns.set_table_properties(T, {"lancens.view": "true"})


def test_append_and_properties_round_trip(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    assert ns.commit_table(T, append_op(ns, T, _rows(10)), 1, {"invocation_id": "inv-2"}) == 2
    assert content(ns, T) == [0, 1, 2, 10, 11, 12]
    listed = ns.list_table_versions(T).items
    assert [v.metadata for v in listed] == [{}, {"invocation_id": "inv-2"}]
    dataset = lance.dataset(ns.describe_table(T).location)
    assert dataset.read_transaction(2).transaction_properties == {"invocation_id": "inv-2"}


def test_commit_to_a_declared_table(ns: DirectoryNamespace) -> None:
    ns.declare_table(T)
    assert ns.describe_table(T).declared_only
    assert ns.commit_table(T, overwrite(ns, T, _rows(5)), None, WHO) == 1
    assert not ns.describe_table(T).declared_only
    assert content(ns, T) == [5, 6, 7]


def test_compatible_concurrent_append_is_rebased(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    ns.commit_table(T, append_op(ns, T, _rows(10)), 1)
    assert ns.commit_table(T, append_op(ns, T, _rows(20)), 1) == 3  # built on 1, 2 happened meanwhile
    assert content(ns, T) == [0, 1, 2, 10, 11, 12, 20, 21, 22]


def test_conflicting_concurrent_commit_is_14_and_leaves_no_version(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    location = ns.describe_table(T).location
    stale = lance.dataset(location, version=1)
    lance.dataset(location).delete("id = 0")  # version 2 rewrites fragment 0's deletion vector
    fragment = stale.get_fragment(0).delete("id = 1")
    operation = lance.LanceOperation.Delete([fragment], [], "id = 1")
    with pytest.raises(errors.ConcurrentModificationError) as conflict:
        ns.commit_table(T, operation, 1)
    assert conflict.value.code == 14
    assert lance.dataset(location).version == 2
    assert content(ns, T) == [1, 2]


def test_conflict_message_says_what_happened_without_lance_source_locations(ns: DirectoryNamespace) -> None:
    """The 14 used to carry Lance's `conflict_resolver.rs:1830:30`."""
    create(ns, T, _rows(0))
    stale = [overwrite(ns, T, _rows(10)), overwrite(ns, T, _rows(20))]
    ns.commit_table(T, stale[0], 1)
    with pytest.raises(errors.ConcurrentModificationError) as conflict:
        ns.commit_table(T, stale[1], 1)
    message = str(conflict.value)
    assert "another writer committed a conflicting change since version 1" in message
    assert "run it again" in message and ".rs:" not in message, message


def test_restore_makes_a_new_version_equal_to_the_old_one(ns: DirectoryNamespace) -> None:
    create(ns, T, _rows(0))
    ns.commit_table(T, overwrite(ns, T, _rows(100)))
    assert ns.restore_table(T, 1) == 3
    assert content(ns, T) == content(ns, T, 1) == [0, 1, 2]
    assert [v.version for v in ns.list_table_versions(T).items] == [1, 2, 3]
    with pytest.raises(errors.TableVersionNotFoundError):
        ns.restore_table(T, 42)
    with pytest.raises(errors.TableNotFoundError):
        ns.restore_table(["ns", "nope"], 1)


def test_root_table_in_v1_mode(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"), manifest_enabled=False)
    assert ns.commit_table(["r"], overwrite(ns, ["r"], _rows(0)), None, WHO) == 1  # V1 names are fixed
    assert ns.table_location(["r"]).rstrip("/").endswith("r.lance")
    assert ns.describe_table_version(["r"], 1).metadata == WHO
