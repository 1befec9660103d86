"""`registered_locations` names every directory a row owns, in every naming mode, and
`restore_reservations` puts back only what a registered object without data must have."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa

from dbt.adapters.lancens.namespace import DirectoryNamespace


def test_every_owned_directory_is_named_and_only_lost_reservations_are_restored(tmp_path: Path) -> None:
    ns = DirectoryNamespace(str(tmp_path / "root"))  # compatibility mode: root objects are <name>.lance
    ns.create_table(["root_t"], pa.table({"id": [1]}))
    ns.create_view(["root_v"], "select 1")
    ns.create_namespace(["a"])
    ns.create_namespace(["a", "b"])
    ns.create_view(["a", "b", "v"], "select 2")
    ns.declare_table(["a", "d"])
    owned = ns.registered_locations()
    root_t = f"{ns.root}/root_t.lance"
    assert owned[root_t] == "table" and owned[f"{ns.root}/root_v.lance"] == "view"
    assert sorted(owned.values()) == ["table", "table", "view", "view"]
    assert not Path(root_t, ".lance-reserved").exists()
    assert ns.restore_reservations() == []  # a table with data needs no reservation

    lost = [location for location in owned if location != root_t]
    for location in lost:  # the views' and the declared table's directories, as the old cleanup did
        shutil.rmtree(location)
    assert sorted(ns.restore_reservations()) == sorted(lost)
    for location in lost:
        assert Path(location, ".lance-reserved").read_bytes() == b"reserved"
    assert ns.describe_view(["a", "b", "v"]).sql == "select 2"
    assert ns.describe_table(["a", "d"]).declared_only

    shutil.rmtree(Path(root_t, "_versions"))  # data files left, no version: not what a cleanup did
    assert ns.restore_reservations() == []
    assert not Path(root_t, ".lance-reserved").exists()
