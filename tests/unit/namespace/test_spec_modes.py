"""Spec 002 to the letter where the modes meet: V1 answers, compatibility-mode agreement, and
DropTable on deregistered tables."""

from __future__ import annotations

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pytest

from tests.unit.namespace.helpers import code_of, make, rows


@pytest.mark.parametrize("mode", ["v1", "compat"])
def test_drop_table_works_on_a_deregistered_table(tmp_path, mode):
    """Spec 002, DeregisterTable: "DropTable still works on deregistered tables (removes both data
    and marker file)"."""
    ns = make(str(tmp_path), mode)
    ns.create_table(["t"], rows())
    ns.deregister_table(["t"])
    assert (tmp_path / "t.lance" / ".lance-deregistered").exists()
    assert not ns.table_exists(["t"])
    info = ns.drop_table(["t"])
    assert info.location == str(tmp_path / "t.lance")
    assert not (tmp_path / "t.lance").exists()
    assert code_of(lambda: ns.drop_table(["t"])) == 4
    ns.create_table(["t"], rows(1))  # the name is free again
    assert ns.describe_table(["t"]).version == 1


def test_deregistered_data_blocks_a_new_table_of_that_name(tmp_path):
    ns = make(str(tmp_path), "v1")
    ns.create_table(["t"], rows())
    ns.deregister_table(["t"])
    assert code_of(lambda: ns.create_table(["t"], rows())) == 5  # register or drop it first
    assert lance.dataset(str(tmp_path / "t.lance")).count_rows() == 3


def test_v1_mode_has_no_namespaces_and_says_so_without_code_0(tmp_path):
    ns = make(str(tmp_path), "v1")
    ns.create_table(["t"], rows())
    assert ns.list_namespaces([]).items == []
    assert ns.list_namespaces(["a"]).items == []  # spec: "In V1, this operation returns an empty list"
    assert ns.namespace_exists([]) and not ns.namespace_exists(["a"])
    assert not ns.namespace_exists(["a", "b"])
    assert code_of(lambda: ns.create_namespace(["a"])) == 0  # creating one is what V1 cannot do


def test_compat_list_and_exists_agree_for_a_v1_dir_named_like_a_namespace(tmp_path):
    lance.write_dataset(rows(), str(tmp_path / "foo.lance"))
    lance.write_dataset(rows(), str(tmp_path / "bar.lance"))
    ns = make(str(tmp_path))
    ns.create_namespace(["foo"])
    listed = ns.list_tables([]).items
    assert listed == ["bar"]
    for name in ("foo", "bar"):
        assert ns.table_exists([name]) == (name in listed)
    assert code_of(lambda: ns.describe_table(["foo"])) == 4
    assert [entry.id for entry in ns.list_objects() if entry.object_type == "table"] == [["bar"]]


def test_deregistered_child_table_named_dot_lance_never_becomes_a_root_table(tmp_path):
    ns = make(str(tmp_path))
    ns.create_namespace(["n1"])
    location = ns.create_table(["n1", "t.lance"], rows()).location
    assert location.endswith("_n1$t.lance")
    ns.deregister_table(["n1", "t.lance"])
    assert ns.list_tables([]).items == [] and ns.list_tables(["n1"]).items == []
    assert lance.dataset(location).count_rows() == 3  # data kept
    assert [entry.id for entry in ns.list_objects()] == [["n1"]]


def test_deregistered_renamed_root_table_named_dot_lance_stays_hidden(tmp_path):
    """A root table renamed to ``x.lance`` lives in ``<hash>_x.lance``: deregistering it must not
    turn that directory into a V1 table called ``<hash>_x``."""
    ns = make(str(tmp_path))
    ns.create_table(["t"], rows())
    location = ns.rename_table(["t"], ["x.lance"]).location
    ns.deregister_table(["x.lance"])
    assert ns.list_tables([]).items == []
    assert (tmp_path / location.rsplit("/", 1)[-1] / ".lance-deregistered").exists()
    theirs = native_ns.DirectoryNamespace(root=str(tmp_path))
    assert theirs.list_tables(lns.ListTablesRequest(id=[])).tables == []
