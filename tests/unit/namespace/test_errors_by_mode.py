"""Every operation's spec error codes, per mode (V1 only, V2 only, compatibility)."""

from __future__ import annotations

import pytest

from tests.unit.namespace.helpers import code_of, make, rows


@pytest.mark.parametrize("mode", ["v2", "compat"])
def test_namespace_errors_with_manifest(tmp_path, mode):
    ns = make(str(tmp_path), mode)
    ns.create_namespace(["a"])
    assert code_of(lambda: ns.create_namespace(["a"])) == 2
    assert code_of(lambda: ns.create_namespace([])) == 2
    assert code_of(lambda: ns.create_namespace(["x", "y"])) == 1
    assert code_of(lambda: ns.list_namespaces(["x"])) == 1
    assert code_of(lambda: ns.describe_namespace(["x"])) == 1
    assert code_of(lambda: ns.drop_namespace(["x"])) == 1
    assert code_of(lambda: ns.drop_namespace([])) == 13
    ns.create_table(["a", "t"], rows())
    assert code_of(lambda: ns.drop_namespace(["a"])) == 3
    assert code_of(lambda: ns.create_namespace(["a", "t"])) == 2  # same object id as a table
    assert ns.namespace_exists(["a"]) and not ns.namespace_exists(["x"])


def test_v1_rejects_child_namespaces(tmp_path):
    ns = make(str(tmp_path), "v1")
    assert code_of(lambda: ns.create_namespace(["a"])) == 0
    assert code_of(lambda: ns.describe_namespace(["a"])) == 0
    assert code_of(lambda: ns.list_tables(["a"])) == 0
    assert code_of(lambda: ns.create_table(["a", "t"], rows())) == 0
    assert code_of(lambda: ns.rename_table(["t"], ["u"])) == 0
    assert ns.list_namespaces([]).items == []
    assert ns.describe_namespace([]).properties == {}


@pytest.mark.parametrize("mode", ["v1", "v2", "compat"])
def test_table_errors(tmp_path, mode):
    ns = make(str(tmp_path), mode)
    ns.create_table(["t"], rows())
    assert code_of(lambda: ns.create_table(["t"], rows())) == 5
    assert code_of(lambda: ns.declare_table(["t"])) == 5
    assert code_of(lambda: ns.describe_table(["missing"])) == 4
    assert code_of(lambda: ns.describe_table(["t"], version=99)) == 11
    assert code_of(lambda: ns.drop_table(["missing"])) == 4
    assert code_of(lambda: ns.deregister_table(["missing"])) == 4
    ns.deregister_table(["t"])
    assert code_of(lambda: ns.deregister_table(["t"])) == 4
    assert code_of(lambda: ns.describe_table(["t"])) == 4
    assert not ns.table_exists(["t"])
    assert ns.list_tables([]).items == []


@pytest.mark.parametrize("mode", ["v2", "compat"])
def test_child_table_errors(tmp_path, mode):
    ns = make(str(tmp_path), mode)
    assert code_of(lambda: ns.create_table(["nope", "t"], rows())) == 1
    assert code_of(lambda: ns.declare_table(["nope", "t"])) == 1
    assert code_of(lambda: ns.describe_table(["nope", "t"])) == 1
    assert code_of(lambda: ns.drop_table(["nope", "t"])) == 1
    assert code_of(lambda: ns.list_tables(["nope"])) == 1
    assert code_of(lambda: ns.register_table(["nope", "t"], "x")) == 1
    ns.create_namespace(["a"])
    ns.create_table(["a", "t"], rows())
    assert code_of(lambda: ns.rename_table(["a", "t"], ["nope", "u"])) == 1
    ns.create_table(["a", "u"], rows())
    assert code_of(lambda: ns.rename_table(["a", "t"], ["a", "u"])) == 5
    assert code_of(lambda: ns.register_table(["a", "r"], "/elsewhere/t.lance")) == 13
    assert code_of(lambda: ns.register_table(["a", "r"], "../t.lance")) == 13


@pytest.mark.parametrize(
    "bad", [None, [], [""], ["a$b"], ["a/b"], ["a\\b"], ["__manifest"], "t", [None], ["ok", ""]]
)
def test_bad_identifiers_are_invalid_input(tmp_path, bad):
    ns = make(str(tmp_path))
    assert code_of(lambda: ns.create_table(bad, rows())) == 13
    assert code_of(lambda: ns.table_exists(bad)) == 13
    if bad != []:
        assert code_of(lambda: ns.create_namespace(bad)) == 13


def test_version_of_declared_table_is_not_found(tmp_path):
    ns = make(str(tmp_path))
    ns.declare_table(["d"])
    assert code_of(lambda: ns.describe_table(["d"], version=1)) == 11
    assert ns.describe_table(["d"]).declared_only


def test_views_errors(tmp_path):
    ns = make(str(tmp_path))
    ns.create_table(["t"], rows())
    assert code_of(lambda: ns.create_view(["t"], "select 1")) == 5
    assert code_of(lambda: ns.describe_view(["v"])) == 4
    assert code_of(lambda: ns.drop_view(["v"])) == 4
    assert code_of(lambda: ns.create_view(["nope", "v"], "select 1")) == 1
    assert code_of(lambda: ns.create_view(["v"], "")) == 13
    assert code_of(lambda: make(str(tmp_path), "v1").create_view(["v"], "select 1")) == 0
