"""The catalog cache (``fragment_cache``): what a process reads through it is exactly what the
store holds, through creates, drops, folds and restores, and a hit reads no data file."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors, maintenance
from dbt.adapters.lancens.namespace.fragment_cache import KEEP, STALE_SECONDS, FragmentCache
from tests.unit.namespace.helpers import make, rows


def _sorted_rows(table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: row["object_id"])


def _store(root: Path) -> lance.LanceDataset:
    return lance.dataset(str(root / "__manifest"))


def _data_files(dataset: lance.LanceDataset) -> set[str]:
    return {f.path for fragment in dataset.get_fragments() for f in fragment.data_files()}


def _entries(cache_dir: Path) -> list[Path]:
    return list(cache_dir.glob("*/*.arrow"))


def _past_the_small_manifest(root: Path) -> DirectoryNamespace:
    """A root whose ``__manifest`` has an indexed fragment that commits no longer rewrite whole."""
    writer = make(str(root))
    writer.create_namespace(["n"])
    for i in range(maintenance.SMALL_ROWS + 8):
        writer.create_table(["n", f"t{i}"], rows(1))
    return writer


def test_cached_reads_are_the_store_through_creates_drops_and_folds(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = make(str(root))
    for n in range(3):
        writer.create_namespace([f"n{n}"])
    cache = FragmentCache(cache_dir, str(root / "__manifest"))
    folds, seen_files = 0, _data_files(_store(root))
    for i in range(maintenance.SMALL_ROWS + 3 * maintenance.UNINDEXED_ROWS):
        writer.create_table([f"n{i % 3}", f"t{i}"], rows(1))
        if i % 7 == 6:
            writer.drop_table([f"n{i % 3}", f"t{i - 3}"])  # a deletion in an older fragment
        if i % 11 == 10:
            writer.alter_namespace_properties([f"n{i % 3}"], {"at": str(i)})  # a replace
        store = _store(root)
        assert _sorted_rows(cache.read(store)) == _sorted_rows(store.to_table()), i
        files = _data_files(store)
        folds += not (files & seen_files)
        seen_files = files
    assert folds >= 3, folds  # the cached fragments were replaced by folds, and read anew
    assert 0 < len(_entries(cache_dir)) <= KEEP


def test_a_hit_reads_no_data_file_even_after_new_deletions(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = _past_the_small_manifest(root)
    cache = FragmentCache(cache_dir, str(root / "__manifest"))
    before = _store(root)
    cache.read(before)
    writer.drop_table(["n", "t0"])  # a new deletion file on the indexed fragment
    after = _store(root)
    indexed = next(f for f in after.get_fragments() if f.deletion_file())
    assert {f.path for f in indexed.data_files()} <= _data_files(before)
    # Take the indexed fragment's data away: only the cache can answer for its rows.
    (data,) = indexed.data_files()
    hidden = tmp_path / "hidden.lance"
    shutil.move(root / "__manifest" / "data" / data.path, hidden)
    try:
        with pytest.raises(pa.ArrowInvalid, match="Not found"):  # the store alone cannot answer now
            after.to_table()
        got = {row["object_id"] for row in cache.read(after).to_pylist()}
    finally:
        shutil.move(hidden, root / "__manifest" / "data" / data.path)
    assert got == {row["object_id"] for row in after.to_table().to_pylist()}
    assert "n$t0" not in got and "n$t1" in got


def test_deletions_undone_by_a_restore_read_the_fragment_again(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = _past_the_small_manifest(root)
    kept = _store(root).version
    writer.drop_table(["n", "t0"])
    cache = FragmentCache(cache_dir, str(root / "__manifest"))
    assert "n$t0" not in {r["object_id"] for r in cache.read(_store(root)).to_pylist()}
    lance.dataset(str(root / "__manifest"), version=kept).restore()  # same data file, no deletion
    restored = _store(root)
    assert _sorted_rows(cache.read(restored)) == _sorted_rows(restored.to_table())
    assert "n$t0" in {r["object_id"] for r in cache.read(restored).to_pylist()}


def test_an_unreadable_entry_is_read_from_the_store_and_replaced(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = make(str(root))
    writer.create_namespace(["n"])
    writer.create_table(["n", "t"], rows(1))
    cache = FragmentCache(cache_dir, str(root / "__manifest"))
    store = _store(root)
    cache.read(store)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(b"not arrow")
    assert _sorted_rows(cache.read(store)) == _sorted_rows(store.to_table())
    assert entry.read_bytes()[:6] == b"ARROW1"  # rewritten


def test_what_a_killed_writer_left_is_removed_by_the_next_write(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = make(str(root))
    writer.create_namespace(["n"])
    cache = FragmentCache(cache_dir, str(root / "__manifest"))
    cache.read(_store(root))
    (entry,) = _entries(cache_dir)
    old, fresh = entry.parent / "tmpold.tmp", entry.parent / "tmpfresh.tmp"
    for leftover in (old, fresh):
        leftover.write_bytes(b"half an entry")
    os.utime(old, (time.time() - 2 * STALE_SECONDS,) * 2)
    writer.create_table(["n", "t"], rows(1))  # a new version: its fragment is read and written
    cache.read(_store(root))
    assert not old.exists() and fresh.exists()  # a write in progress elsewhere is left alone


def test_an_unwritable_cache_directory_never_fails_a_read(tmp_path):
    root = tmp_path / "root"
    make(str(root)).create_namespace(["n"])
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be")
    store = _store(root)
    assert _sorted_rows(FragmentCache(blocker, str(root / "__manifest")).read(store)) == _sorted_rows(
        store.to_table()
    )


def test_a_namespace_with_a_cache_sees_another_writers_commits(tmp_path):
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    writer = make(str(root))
    writer.create_namespace(["n"])
    for i in range(maintenance.SMALL_ROWS + 4):
        writer.create_table(["n", f"t{i}"], rows(1))
        reader = DirectoryNamespace(str(root), catalog_cache_dir=cache_dir)  # a new process's view
        assert reader.list_tables(["n"]).items == sorted(f"t{k}" for k in range(i + 1))
    writer.drop_table(["n", "t3"])
    reader = DirectoryNamespace.from_properties({"root": str(root), "catalog_cache_dir": str(cache_dir)})
    assert "t3" not in reader.list_tables(["n"]).items
    assert reader.properties["catalog_cache_dir"] == str(cache_dir)
    assert _entries(cache_dir)
    with pytest.raises(errors.TableNotFoundError):
        reader.describe_table(["n", "t3"])


def test_the_cache_is_per_root(tmp_path):
    cache_dir = tmp_path / "cache"
    for name in ("a", "b"):
        ns = DirectoryNamespace(str(tmp_path / name), catalog_cache_dir=cache_dir)
        make(str(tmp_path / name)).create_namespace([name])
        assert [i for i in ns.list_namespaces([]).items] == [name]
    assert len(os.listdir(cache_dir)) == 2
