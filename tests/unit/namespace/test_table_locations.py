"""A table's directory belongs to one name, and only directories the engine owns are dropped.

declare_table and register_table used to take locations that drop_table would then delete: the
namespace's own `__manifest` (every namespace and table row), a directory outside the root, or
another table's directory under a second name.
"""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64())})


@pytest.fixture
def ns(tmp_path: Path) -> DirectoryNamespace:
    ns = DirectoryNamespace(str(tmp_path / "root"))
    ns.create_namespace(["a"])
    ns.create_table(["a", "t"], DATA)
    ns.create_table(["r"], DATA)
    return ns


def _intact(ns: DirectoryNamespace) -> None:
    fresh = DirectoryNamespace(ns.root)
    assert fresh.namespace_exists(["a"])
    for table_id in (["a", "t"], ["r"]):
        info = fresh.describe_table(table_id)
        assert info.version == 1 and lance.dataset(info.location).to_table() == DATA


@pytest.mark.parametrize("where", ["__manifest", "outside", "other_table"])
def test_declare_takes_only_its_own_location(ns: DirectoryNamespace, tmp_path: Path, where: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    location = {"__manifest": "__manifest", "outside": str(outside), "other_table": "r.lance"}[where]
    with pytest.raises(errors.InvalidInputError, match="is not where the table must live"):
        ns.declare_table(["a", "x"], location=location)
    assert not ns.table_exists(["a", "x"])
    assert (outside / "keep.txt").read_text() == "keep"
    assert not (outside / ".lance-reserved").exists()
    _intact(ns)
    # its own location, given explicitly, is fine (a root table's `<name>.lance`)
    assert ns.declare_table(["z"], location="z.lance").location == ns._context.fs.join("z.lance")


@pytest.mark.parametrize("location", ["__manifest", "__manifest/", "./__manifest", ".", "a/../__manifest"])
def test_register_refuses_the_manifest_and_the_root(ns: DirectoryNamespace, location: str) -> None:
    with pytest.raises(errors.InvalidInputError):
        ns.register_table(["a", "m"], location)
    assert not ns.table_exists(["a", "m"])
    _intact(ns)


@pytest.mark.parametrize("spelling", ["r.lance", "./r.lance", "r.lance/", "absolute"])
def test_register_refuses_another_tables_directory(ns: DirectoryNamespace, spelling: str) -> None:
    location = ns.describe_table(["r"]).location if spelling == "absolute" else spelling
    with pytest.raises(errors.InvalidInputError, match="already the directory of r"):
        ns.register_table(["a", "alias"], location)
    assert not ns.table_exists(["a", "alias"])
    _intact(ns)


def test_register_stores_one_spelling(ns: DirectoryNamespace) -> None:
    """`./x.lance` and `x.lance` are one directory: the row holds the normalised form."""
    location = ns.deregister_table(["a", "t"]).location
    relative = location.removeprefix(ns._context.fs.join(""))
    ns.register_table(["a", "t"], f"./{relative}/")
    assert ns._context.manifest.get("a$t")["location"] == relative
    assert ns.describe_table(["a", "t"]).location == location
    _intact(ns)
