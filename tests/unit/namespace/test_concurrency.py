"""Racing writers in real processes (spawn: pylance is not fork-safe) on one __manifest."""

from __future__ import annotations

import multiprocessing

import lance
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

# one of the unit scopes of a minute or more: scheduled first of its folder (tests/conftest.py)
pytestmark = pytest.mark.slow


def _create_namespace(args: tuple[str, list[str]]) -> str:
    root, namespace_id = args
    try:
        DirectoryNamespace(root).create_namespace(namespace_id)
        return "ok"
    except errors.NamespaceError as exc:
        return str(exc.code)


def _declare(args: tuple[str, list[str]]) -> str:
    root, table_id = args
    try:
        DirectoryNamespace(root).declare_table(table_id)
        return "ok"
    except errors.NamespaceError as exc:
        return str(exc.code)


def _run(func, jobs):
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        return pool.map(func, jobs)


def _object_ids(root: str) -> list[str]:
    return lance.dataset(f"{root}/__manifest").to_table(columns=["object_id"])["object_id"].to_pylist()


def test_same_id_exactly_one_winner(tmp_path):
    root = str(tmp_path)
    DirectoryNamespace(root).create_namespace(["seed"])  # manifest exists before the race
    results = _run(_create_namespace, [(root, ["race"])] * 6)
    assert results.count("ok") == 1
    assert set(results) - {"ok"} <= {"2", "14"}
    assert _object_ids(root).count("race") == 1


def test_same_table_declare_exactly_one_winner(tmp_path):
    root = str(tmp_path)
    ns = DirectoryNamespace(root)
    ns.create_namespace(["n"])
    results = _run(_declare, [(root, ["n", "t"])] * 6)
    assert results.count("ok") == 1
    assert set(results) - {"ok"} <= {"5", "14"}
    assert _object_ids(root).count("n$t") == 1
    # losers removed their reservation: exactly one reserved directory remains for n$t
    assert len([p for p in tmp_path.iterdir() if p.name.endswith("_n$t")]) == 1


def test_different_ids_all_win(tmp_path):
    root = str(tmp_path)
    DirectoryNamespace(root).create_namespace(["seed"])
    results = _run(_create_namespace, [(root, [f"ns{i}"]) for i in range(8)])
    assert results == ["ok"] * 8
    assert sorted(DirectoryNamespace(root).list_namespaces([]).items) == sorted(
        [f"ns{i}" for i in range(8)] + ["seed"]
    )


def test_cache_sees_other_process_commits(tmp_path):
    root = str(tmp_path)
    ns = DirectoryNamespace(root)
    ns.create_namespace(["a"])
    assert ns.list_namespaces([]).items == ["a"]
    assert _run(_create_namespace, [(root, ["b"])]) == ["ok"]
    assert ns.list_namespaces([]).items == ["a", "b"]
    assert ns.namespace_exists(["b"])
    assert not ns.table_exists(["b", "t"])  # cached: the manifest version without b.t
    assert _run(_declare, [(root, ["b", "t"])]) == ["ok"]
    assert ns.table_exists(["b", "t"])  # one snapshot per lookup, opened afresh: sees the other process
    assert ns.describe_table(["b", "t"]).declared_only
