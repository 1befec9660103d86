"""Every bad input is InvalidInput (13) with a message naming the argument, and changes nothing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

ROWS = pa.table({"id": [1, 2]})
APPEND = lance.LanceOperation.Append([])


def _staged(root: Path) -> str:
    """A copy of n.t's version-1 manifest under a staging name (a valid create_table_version input)."""
    versions = next(root.glob("*_n$t")) / "_versions"
    source = next(versions.glob("*.manifest"))
    staged = versions / "2.manifest-staged"
    shutil.copy(source, staged)
    return str(staged)


Call = Callable[[DirectoryNamespace, Path], object]
CASES: list[tuple[str, str, Call]] = [
    ("nul", "id", lambda ns, root: ns.create_table(["bad\x00"], ROWS)),
    ("tab", "id", lambda ns, root: ns.create_namespace(["a\tb"])),
    ("newline", "id", lambda ns, root: ns.declare_table(["n", "x\ny"])),
    ("delete_char", "id", lambda ns, root: ns.create_view(["n", "v\x7f"], "select 1")),
    ("too_long_root", "id", lambda ns, root: ns.create_table(["x" * 247], ROWS)),
    ("too_long_with_parent", "id", lambda ns, root: ns.create_table(["n", "y" * 245], ROWS)),
    ("too_long_multibyte", "id", lambda ns, root: ns.create_namespace(["ü" * 124])),
    ("int_level", "id", lambda ns, root: ns.create_namespace(["ok", 3])),
    ("bytes_level", "id", lambda ns, root: ns.describe_table(["n", b"t"])),
    ("bare_string", "namespace_id", lambda ns, root: ns.list_tables("n")),
    ("rename_target", "new_id", lambda ns, root: ns.rename_table(["n", "t"], ["n", "a\x00"])),
    ("base_object_string", "base_objects", lambda ns, root: ns.create_view(["n", "v"], "s", ["n$t"])),
    ("token_type", "page_token", lambda ns, root: ns.list_tables(["n"], page_token=5)),
    ("limit_type", "limit", lambda ns, root: ns.list_tables(["n"], limit="10")),
    ("limit_bool", "limit", lambda ns, root: ns.list_namespaces([], limit=True)),
    ("limit_negative", "limit", lambda ns, root: ns.list_views(["n"], limit=-1)),
    ("version_token", "page_token", lambda ns, root: ns.list_table_versions(["n", "t"], page_token="x")),
    ("version_limit", "limit", lambda ns, root: ns.list_table_versions(["n", "t"], limit=-2)),
    ("version_negative", "version", lambda ns, root: ns.describe_table(["n", "t"], version=-1)),
    ("version_too_big", "version", lambda ns, root: ns.describe_table(["n", "t"], version=2**63)),
    ("version_type", "version", lambda ns, root: ns.describe_table_version(["n", "t"], version="1")),
    ("create_version_big", "version", lambda ns, root: ns.create_table_version(["n", "t"], 2**64, "x")),
    ("delete_versions", "versions", lambda ns, root: ns.batch_delete_table_versions(["n", "t"], [1, -1])),
    ("read_version", "read_version", lambda ns, root: ns.commit_table(["n", "t"], APPEND, read_version=-1)),
    ("operation", "operation", lambda ns, root: ns.commit_table(["n", "t"], "append")),
    (
        "scheme_mismatch",
        "naming_scheme",
        lambda ns, root: ns.create_table_version(["n", "t"], 2, _staged(root), naming_scheme="V1"),
    ),
    (
        "scheme_unknown",
        "naming_scheme",
        lambda ns, root: ns.create_table_version(["n", "t"], 2, _staged(root), naming_scheme="V3"),
    ),
    ("properties_type", "properties", lambda ns, root: ns.create_namespace(["m"], properties="a=1")),
    ("properties_keys", "properties", lambda ns, root: ns.create_table(["n", "u"], ROWS, {1: "a"})),
    ("updates", "updates", lambda ns, root: ns.alter_namespace_properties(["n"], ["a"])),
    ("removals", "removals", lambda ns, root: ns.alter_namespace_properties(["n"], {}, "a")),
    ("data", "data", lambda ns, root: ns.create_table(["n", "u"], {"id": [1]})),
    ("register_location", "location", lambda ns, root: ns.register_table(["n", "u"], 5)),
    ("declare_location", "location", lambda ns, root: ns.declare_table(["n", "u"], location=7)),
    (
        "unknown_property",
        "manifest_enable",
        lambda ns, root: DirectoryNamespace.from_properties({"root": str(root), "manifest_enable": "true"}),
    ),
    (
        "bad_boolean",
        "manifest_enabled",
        lambda ns, root: DirectoryNamespace.from_properties({"root": str(root), "manifest_enabled": "maybe"}),
    ),
    ("root_type", "root", lambda ns, root: DirectoryNamespace(5)),  # type: ignore[arg-type]
    ("flag_type", "manifest_enabled", lambda ns, root: DirectoryNamespace(str(root), manifest_enabled="no")),
    (
        "storage_options",
        "storage_options",
        lambda ns, root: DirectoryNamespace(str(root), storage_options=[1]),
    ),
    (
        "catalog_cache_dir",
        "catalog_cache_dir",
        lambda ns, root: DirectoryNamespace(str(root), catalog_cache_dir=7),  # type: ignore[arg-type]
    ),
]


def _tree(root: Path) -> list[tuple[str, int, int]]:
    return sorted(
        (os.path.relpath(os.path.join(folder, name), root), *_size_and_mtime(os.path.join(folder, name)))
        for folder, _, files in os.walk(root)
        for name in files
    )


def _size_and_mtime(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


@pytest.mark.parametrize(("argument", "call"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_invalid_input_naming_the_argument(tmp_path: Path, argument: str, call: Call) -> None:
    ns = DirectoryNamespace(str(tmp_path))
    ns.create_namespace(["n"])
    ns.create_table(["n", "t"], ROWS)
    before = _tree(tmp_path)
    with pytest.raises(errors.InvalidInputError) as raised:
        call(ns, tmp_path)
    assert raised.value.code == 13
    assert argument in str(raised.value), str(raised.value)
    after = [entry for entry in _tree(tmp_path) if not entry[0].endswith(".manifest-staged")]
    assert after == before  # nothing written, nothing lost
    assert ns.list_tables(["n"]).items == ["t"] and ns.describe_table(["n", "t"]).version == 1


def test_longest_ids_that_fit_work(tmp_path: Path) -> None:
    """The length limit is exact: 246 bytes of object id plus the 9-byte hash prefix is 255."""
    ns = DirectoryNamespace(str(tmp_path))
    ns.create_namespace(["n"])
    child = ns.create_table(["n", "y" * 244], ROWS)  # "n$" + 244 = 246 bytes
    assert len(os.path.basename(child.location).encode()) == 255
    root_table = ns.create_table(["x" * 246], ROWS)
    assert os.path.basename(root_table.location) == "x" * 246 + ".lance"
    renamed = ns.rename_table(["x" * 246], ["z" * 246])  # moves to a <hash>_ directory: still fits
    assert len(os.path.basename(renamed.location).encode()) == 255
