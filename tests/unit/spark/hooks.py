"""Commit hooks the write tests name by ``module:function`` (imported in Spark's Python worker)."""

from __future__ import annotations

import json
import os

import lance


def record(uri: str, operation, read_version: int | None, storage_options: dict, args: dict) -> int:
    """Commit normally, and leave a note of what the hook was given for the test to read."""
    dataset = lance.LanceDataset.commit(uri, operation, read_version=read_version)
    note = {
        "uri": uri,
        "operation": type(operation).__name__,
        "read_version": read_version,
        "fragments": len(getattr(operation, "fragments", [])),
        "pid": os.getpid(),
        "storage_options": storage_options,
    }
    with open(args["record"], "w") as handle:
        json.dump(note, handle)
    return dataset.version


def refuse(uri: str, operation, read_version: int | None, storage_options: dict, args: dict) -> int:
    """A hook whose commit is rejected (as a namespace engine would on a conflict)."""
    raise RuntimeError("commit refused by the hook")
