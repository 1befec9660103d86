"""Small shared builders for the engine tests."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace, errors

MODES = {
    "v1": {"manifest_enabled": False, "dir_listing_enabled": True},
    "v2": {"manifest_enabled": True, "dir_listing_enabled": False},
    "compat": {"manifest_enabled": True, "dir_listing_enabled": True},
}


def rows(n: int = 3) -> pa.Table:
    return pa.table({"id": list(range(n)), "name": [f"r{i}" for i in range(n)]})


def make(root: str, mode: str = "compat", **storage: str) -> DirectoryNamespace:
    return DirectoryNamespace(root, storage_options=storage or None, **MODES[mode])


def code_of(call: Callable[[], object]) -> int:
    """The ``.code`` of the NamespaceError ``call`` raises (the test fails if it raises none)."""
    with pytest.raises(errors.NamespaceError) as info:
        call()
    return info.value.code
