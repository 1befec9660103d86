"""Cleanup removes only what is provably the namespace's own (issue #50).

A root may be someone's directory or the dbt project itself (`root: .`): every byte of their files
stays through `cleanup_namespace`, locally and on S3 (moto, a prefix holding other objects), while
real leftovers of ours still go: a crashed create's table directory, a reserved marker no object
owns, a killed writer's temp file. Such a root is refused before its first `__manifest` unless
`allow_foreign_root`; a grace below the safe minimum is refused unless `allow_short_grace`.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import timedelta
from pathlib import Path

import lance
import pytest

from dbt.adapters.lancens.definitions.credentials import LancensCredentials
from dbt.adapters.lancens.metadata import maintenance
from dbt.adapters.lancens.namespace import DirectoryNamespace, errors, ownership
from dbt.adapters.lancens.namespace.storage import Storage
from tests.unit.adapter.helpers import id_rows

# Repro A: someone's directory. The last four are named as the engine names a table's directory:
# `old.lance` holds a file, so directory listing takes it for a (declared) table; the others hold
# files no Lance table has and are kept whole, and reported.
SOMEONES_FILES = {
    "photos/beach.jpg": b"\xff\xd8 a photo",
    "photos/2023/cat.png": b"\x89PNG a cat",
    "projects/thesis/chapter1.tex": b"\\chapter{One}",
    "projects/thesis/data/results.csv": b"a,b\n1,2\n",
    "backup.d/home.tar": b"a backup",
    "notes.txt": b"remember",
    "old.lance/notes.txt": b"not a table",
    "deadbeef_notes/notes.txt": b"mine",
    "cafe0123_mine/data/part.lance": b"looks like data",
    "cafe0123_mine/README.md": b"but this is someone's",
}
# Repro B: `root: .`, the dbt project's own files.
PROJECT_FILES = {
    "dbt_project.yml": b"name: shop\nprofile: shop\n",
    "profiles.yml": b"shop:\n  target: dev\n",
    "models/good.sql": b"select 1 as id",
    "models/schema.yml": b"version: 2\n",
    "seeds/people.csv": b"id,name\n1,ada\n",
    "macros/helpers.sql": b"{% macro m() %}{% endmacro %}",
    "snapshots/orders.sql": b"{% snapshot orders %}{% endsnapshot %}",
    "target/manifest.json": b"{}",
    ".gitignore": b"target/\n",
}
TREES = {"someones_directory": SOMEONES_FILES, "dbt_project": PROJECT_FILES}


@pytest.fixture(params=["local", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A root (local directory or S3 prefix) and its storage options, empty."""
    if request.param == "local":
        return str(tmp_path / "root"), {}
    s3 = request.getfixturevalue("s3_server")
    return s3.uri(f"ownership/{tmp_path.name}"), s3.storage_options


def put(storage: Storage, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        storage.write_bytes(storage.join(relative), content)


def digests(storage: Storage, files: dict[str, bytes]) -> dict[str, str]:
    """SHA-256 of each file as stored now (a missing file is "missing")."""
    return {
        relative: hashlib.sha256(storage.read_bytes(storage.join(relative))).hexdigest()
        if storage.exists(storage.join(relative))
        else "missing"
        for relative in files
    }


def age_everything(storage: Storage) -> tuple[timedelta, bool]:
    """Make every file older than the grace returned, with whether that grace needs the override:
    locally files are set 3 days back and the default 24 h grace is used; S3 stamps objects
    itself, so there a second passes and the grace is one second."""
    if not storage.local:
        time.sleep(1.1)
        return timedelta(seconds=1), True
    past = time.time() - 3 * 24 * 3600
    for directory, folders, names in os.walk(storage.root):
        for name in [*names, *folders]:
            os.utime(os.path.join(directory, name), (past, past))
    return maintenance.DEFAULT_GRACE, False


@pytest.mark.parametrize("tree", TREES)
def test_cleanup_keeps_every_byte_of_files_that_are_not_ours(
    root: tuple[str, dict[str, str]], tree: str
) -> None:
    """Repro A and B: a root among someone's files, a model built, leftovers of ours made, all three
    days old; cleanup removes exactly the leftovers and every other file keeps its bytes."""
    uri, options = root
    files = TREES[tree]
    storage = Storage(uri, options)
    put(storage, files)
    before = digests(storage, files)
    ns = DirectoryNamespace(uri, storage_options=options, allow_foreign_root=True)
    ns.create_namespace(["docs"])
    ns.create_table(["docs", "t"], id_rows(0, 5))
    table = ns.describe_table(["docs", "t"]).location
    # leftovers of ours: a crashed create's table directory (data written, never published), a
    # reserved marker no object owns, a killed writer's temp file in a table's data
    crashed = storage.join("0badc0de_docs$crashed")
    lance.fragment.write_fragments(id_rows(10, 5), crashed, storage_options=options or None)
    ghost = storage.join("0badc0de_docs$ghost")  # a child table's reservation, its row never written
    storage.write_bytes(f"{ghost}/.lance-reserved", b"reserved")
    storage.write_bytes(f"{table}/data/.tmpAb12Cd", b"half a file")
    # a file someone dropped into a registered table's data directory is no leftover either
    storage.write_bytes(f"{table}/data/notes.txt", b"mine")
    grace, short = age_everything(storage)

    report = maintenance.cleanup_namespace(ns, grace=grace, allow_short_grace=short)

    assert digests(storage, files) == before
    assert storage.read_bytes(f"{table}/data/notes.txt") == b"mine"
    removed = "\n".join(report.leftovers)
    assert "0badc0de_docs$crashed" in removed and "0badc0de_docs$ghost" in removed and ".tmpAb12Cd" in removed
    assert not storage.exists(crashed) and not storage.exists(ghost)
    assert len(report.leftovers) == 3, report.summary()
    if tree == "someones_directory":  # named like ours, holding other files: kept, and said so
        kept = "\n".join(report.skipped)
        assert "deadbeef_notes: " in kept and "notes.txt" in kept
        assert "cafe0123_mine: " in kept and "README.md" in kept
        assert "kept " in report.summary()
    assert ns.describe_table(["docs", "t"]).location == table
    assert sorted(lance.dataset(table, storage_options=options or None).to_table()["id"].to_pylist()) == [
        0,
        1,
        2,
        3,
        4,
    ]


@pytest.mark.parametrize("tree", TREES)
def test_a_root_holding_other_files_is_refused_before_anything_is_written(
    root: tuple[str, dict[str, str]], tree: str
) -> None:
    """The first write (its `__manifest`) refuses a root that holds files other than tables,
    naming the root, what is there and the key that allows it; nothing is written. With the key
    the namespace is made among them."""
    uri, options = root
    files = TREES[tree]
    storage = Storage(uri, options)
    put(storage, files)
    ns = DirectoryNamespace(uri, storage_options=options)
    with pytest.raises(errors.InvalidInputError) as refused:
        ns.create_namespace(["docs"])
    message = str(refused.value)
    assert uri in message and "allow_foreign_root: true" in message
    assert ("photos/" if tree == "someones_directory" else "models/") in message
    assert not storage.exists(storage.join("__manifest"))
    assert sorted(storage.files(storage.root)) == sorted(files)

    allowed = DirectoryNamespace.from_properties(
        {"root": uri, "allow_foreign_root": "true", **{f"storage.{k}": v for k, v in options.items()}}
    )
    allowed.create_namespace(["docs"])
    assert allowed.list_namespaces([]).items == ["docs"]
    # once it holds a namespace, the root is taken as one without the key
    assert DirectoryNamespace(uri, storage_options=options).namespace_exists(["docs"])


def test_empty_and_lance_only_roots_need_no_key(root: tuple[str, dict[str, str]]) -> None:
    """A new or empty root, and one holding only Lance tables (`<name>.lance`, as native pylance
    or LanceDB write them), become a namespace as before."""
    uri, options = root
    DirectoryNamespace(uri, storage_options=options).create_namespace(["fresh"])
    storage = Storage(uri, options)
    lance_only = storage.join("lance_only")
    lance.write_dataset(id_rows(0, 3), f"{lance_only}/events.lance", storage_options=options or None)
    ns = DirectoryNamespace(lance_only, storage_options=options)
    ns.create_namespace(["docs"])
    assert ns.list_tables([]).items == ["events"]


def test_the_profile_key_reaches_the_engine(tmp_path: Path) -> None:
    """`allow_foreign_root: true` in the profile is the engine's property of that name."""
    credentials = LancensCredentials(root=str(tmp_path), schema="docs", allow_foreign_root=True)
    properties = credentials.namespace_properties()
    assert properties["allow_foreign_root"] == "true"
    assert DirectoryNamespace.from_properties(properties).properties["allow_foreign_root"] == "true"
    assert (
        "allow_foreign_root"
        not in LancensCredentials(root=str(tmp_path), schema="docs").namespace_properties()
    )


def test_a_short_grace_is_refused_unless_allowed(root: tuple[str, dict[str, str]]) -> None:
    """A grace below the minimum could take a running write's files: refused before anything is
    removed, naming the argument that allows it; with it, the cleanup runs."""
    uri, options = root
    ns = DirectoryNamespace(uri, storage_options=options)
    ns.create_namespace(["docs"])
    ns.create_table(["docs", "t"], id_rows(0, 5))
    crashed = ns.storage.join("0badc0de_docs$crashed")
    lance.fragment.write_fragments(id_rows(10, 5), crashed, storage_options=options or None)

    for call in (
        lambda: maintenance.cleanup_namespace(ns, grace=timedelta(0)),
        lambda: maintenance.cleanup_table(ns, ["docs", "t"], retain_versions=1, grace=timedelta(minutes=59)),
    ):
        with pytest.raises(ValueError, match="allow_short_grace") as refused:
            call()
        assert "below the safe minimum of 1 hour" in str(refused.value)
    assert ns.storage.exists(crashed)

    report = maintenance.cleanup_namespace(ns, grace=timedelta(0), allow_short_grace=True)
    assert any("0badc0de_docs$crashed" in path for path in report.leftovers)
    assert not ns.storage.exists(crashed)
    with pytest.raises(ValueError, match="must not be negative"):
        maintenance.cleanup_namespace(ns, grace=timedelta(hours=-1), allow_short_grace=True)


def test_what_counts_as_a_table_directory(tmp_path: Path) -> None:
    """Everything Lance writes in a table's directory (versions, data, transactions, deletions, an
    index, a tag) is its shape; one entry of another shape at any depth, or a marker with content
    the engine never writes, makes the directory foreign."""
    storage = Storage(str(tmp_path), {})
    location = str(tmp_path / "t.lance")
    dataset = lance.write_dataset(id_rows(0, 300), location)
    dataset.delete("id < 3")
    dataset.create_scalar_index("id", "BTREE")
    dataset.tags.create("kept", 1)
    storage.write_bytes(f"{location}/.lance-reserved", b"reserved")
    storage.write_bytes(f"{location}/data/.tmpQ1w2E3", b"half")
    assert {"_versions", "data", "_transactions", "_deletions", "_indices", "_refs"} <= set(
        storage.names(location)
    )
    assert ownership.foreign_entry(storage, location) is None
    # (a file written, the entry named as foreign, what to remove again)
    for written, named, added in (
        ("data/nested/part.lance", "data/nested/", "data/nested"),
        ("data/photo.jpg", "data/photo.jpg", "data/photo.jpg"),
        ("_versions/notes.txt", "_versions/notes.txt", "_versions/notes.txt"),
        ("_indices/not-a-uuid/index.idx", "_indices/not-a-uuid/", "_indices/not-a-uuid"),
        ("extra/file.bin", "extra/", "extra"),
        ("README.md", "README.md", "README.md"),
    ):
        storage.write_bytes(f"{location}/{written}", b"someone's")
        assert ownership.foreign_entry(storage, location) == named
        storage.rm(f"{location}/{added}", recursive=True)
        assert ownership.foreign_entry(storage, location) is None, written
    storage.write_bytes(f"{location}/.lance-reserved", b"mine now")
    assert ownership.foreign_entry(storage, location) == ".lance-reserved"
