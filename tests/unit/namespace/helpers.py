"""Small shared builders for the engine tests."""

from __future__ import annotations

import pyarrow as pa

from dbt.adapters.lancens.namespace import DirectoryNamespace

MODES = {
    "v1": {"manifest_enabled": False, "dir_listing_enabled": True},
    "v2": {"manifest_enabled": True, "dir_listing_enabled": False},
    "compat": {"manifest_enabled": True, "dir_listing_enabled": True},
}


def rows(n: int = 3) -> pa.Table:
    return pa.table({"id": list(range(n)), "name": [f"r{i}" for i in range(n)]})


def make(root: str, mode: str = "compat", **storage: str) -> DirectoryNamespace:
    return DirectoryNamespace(root, storage_options=storage or None, **MODES[mode])
