"""Committing a write's fragments as one Lance transaction, through the caller's hook if given.

``DataSourceWriter.commit`` runs in a Python worker that the *driver* JVM starts (forked from the
driver-side PySpark daemon), not in the process that called ``df.write``. So the hook cannot be a
Python object from the caller: it is named ``"module:function"`` and imported in that worker, and
its arguments travel as a JSON object (``commit_hook_args``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import lance

CommitHook = Callable[
    [str, "lance.LanceOperation.BaseOperation", "int | None", dict[str, str], dict[str, Any]], int
]


def resolve_hook(spec: str) -> CommitHook:
    """Import ``module:function``; raises ValueError with the spec when it does not name a callable."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"commit_hook must look like 'package.module:function', got {spec!r}")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"commit_hook {spec!r} is not callable")
    return cast(CommitHook, target)


def lance_commit(
    uri: str,
    operation: lance.LanceOperation.BaseOperation,
    read_version: int | None,
    storage_options: dict[str, str],
    args: dict[str, Any],
) -> int:
    """The default hook: commit straight to the dataset with ``lance.LanceDataset.commit``."""
    import lance

    dataset = lance.LanceDataset.commit(
        uri, operation, read_version=read_version, storage_options=storage_options or None
    )
    return dataset.version


def commit_operation(
    uri: str,
    operation: lance.LanceOperation.BaseOperation,
    read_version: int | None,
    storage_options: dict[str, str],
    hook: str | None,
    hook_args: dict[str, Any],
) -> int:
    """Commit through ``hook`` (or ``lance_commit``) and return the new version it reports."""
    commit = resolve_hook(hook) if hook else lance_commit
    version = commit(uri, operation, read_version, dict(storage_options), dict(hook_args))
    if not isinstance(version, int):
        raise TypeError(f"commit hook {hook!r} returned {version!r}, expected the new version (int)")
    return version
