"""Opening Lance datasets from data source options.

``lance`` is imported inside the functions, never at module import: this package is imported by
the driver before Spark forks anything, and pylance must not be loaded in a process that forks.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.spark.worker_heap import freeze_imported_heap

if TYPE_CHECKING:
    import lance


def open_dataset(options: LanceOptions) -> lance.LanceDataset:
    """The dataset at ``options.uri``, as the options' time travel says (else its latest version)."""
    import lance

    freeze_imported_heap()
    dataset = lance.dataset(options.uri, version=options.version, storage_options=options.storage_options)
    if options.timestamp is not None:
        return dataset.checkout_version(version_at(dataset, options.timestamp))
    return dataset


def version_at(dataset: lance.LanceDataset, moment: datetime) -> int:
    """The latest version committed at or before ``moment`` (an aware datetime).

    pylance reports version timestamps as naive local-time datetimes (and its own ``asof`` then
    fails on aware input), so they are made aware here before comparing.
    """
    candidates = [
        int(entry["version"])
        for entry in dataset.versions()
        if isinstance(entry["timestamp"], datetime) and _aware(entry["timestamp"]) <= moment
    ]
    if not candidates:
        raise ValueError(f"{moment.isoformat()} is before the first version of {dataset.uri}")
    return max(candidates)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.astimezone()


def try_open_latest(options: LanceOptions) -> lance.LanceDataset | None:
    """The latest version, or None when no table exists at the location yet (first write)."""
    import lance

    freeze_imported_heap()
    try:
        return lance.dataset(options.uri, storage_options=options.storage_options)
    except ValueError as exc:
        if "not found" not in str(exc).lower():
            raise
        return None
