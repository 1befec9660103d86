"""A create whose namespace is dropped between its check and its commit fails with 1 and leaves
nothing behind (spec 002: no object under a missing namespace, no DropNamespace of a non-empty one).

Deterministic: another engine drops the (still empty) namespace right after this create's checks,
the interleaving that racing processes hit (tests/reliability/test_namespace_races.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, datasets, errors, table_ops

DATA = pa.table({"id": pa.array([1, 2], pa.int64())})


def _creates(ns: DirectoryNamespace) -> dict[str, Callable[[], object]]:
    return {
        "create_table": lambda: ns.create_table(["n", "t"], DATA),
        "declare_table": lambda: ns.declare_table(["n", "t"]),
        "create_view": lambda: ns.create_view(["n", "t"], "select 1"),
        "create_namespace": lambda: ns.create_namespace(["n", "t"]),
    }


@pytest.mark.parametrize("operation", ["create_table", "declare_table", "create_view", "create_namespace"])
def test_create_under_a_namespace_dropped_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    root = str(tmp_path / "root")
    ours, other = DirectoryNamespace(root), DirectoryNamespace(root)
    ours.create_namespace(["n"])
    ours.describe_namespace(["n"])  # warm: the create below plans on this cached version first
    dropped = []

    def drop_once() -> None:
        if not dropped:
            dropped.append(True)
            other.drop_namespace(["n"])

    # The last step before the manifest insert of each operation: the data write, the reservation,
    # or (namespaces) the parent check itself.
    real_create, real_reserve = datasets.create, table_ops.reserve
    monkeypatch.setattr(datasets, "create", lambda *a, **k: (real_create(*a, **k), drop_once())[0])
    monkeypatch.setattr(table_ops, "reserve", lambda *a, **k: (real_reserve(*a, **k), drop_once())[0])
    monkeypatch.setattr("dbt.adapters.lancens.namespace.view_ops.reserve", table_ops.reserve)
    real_require = ours._context.require_namespace
    monkeypatch.setattr(
        ours._context, "require_namespace", lambda i: (real_require(i), drop_once() if i else None)[0]
    )
    with pytest.raises(errors.NamespaceNotFoundError, match="dropped concurrently"):
        _creates(ours)[operation]()
    monkeypatch.undo()
    assert dropped
    fresh = DirectoryNamespace(root)
    assert not fresh.namespace_exists(["n"])
    assert fresh._context.manifest.by_id() == {}
    assert sorted(p.name for p in Path(root).iterdir()) == ["__manifest"]  # the created data is gone
    fresh.create_namespace(["n"])  # a new namespace of that name starts empty
    assert fresh.list_tables(["n"]).items == [] and fresh.list_namespaces(["n"]).items == []
