"""Opening Lance datasets from data source options.

``lance`` is imported inside the functions, never at module import: this package is imported by
the driver before Spark forks anything, and pylance must not be loaded in a process that forks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbt.adapters.lancens.spark.options import LanceOptions

if TYPE_CHECKING:
    import lance


def open_dataset(options: LanceOptions, version: int | None = None) -> lance.LanceDataset:
    """The dataset at ``options.uri``: at ``version`` if given, else as the options' time travel says."""
    import lance

    if version is not None:
        return lance.dataset(options.uri, version=version, storage_options=options.storage_options)
    return lance.dataset(
        options.uri,
        version=options.version,
        asof=options.timestamp,
        storage_options=options.storage_options,
    )


def try_open_latest(options: LanceOptions) -> lance.LanceDataset | None:
    """The latest version, or None when no table exists at the location yet (first write)."""
    import lance

    try:
        return lance.dataset(options.uri, storage_options=options.storage_options)
    except ValueError as exc:
        if "not found" not in str(exc).lower():
            raise
        return None
