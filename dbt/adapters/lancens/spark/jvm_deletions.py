"""Deletion files written by Spark tasks in the JVM with lance-core (`FragmentDeletions` of the connector).

The JVM path's counterpart of `row_changes.delete_with_tasks`: the rows a join named by their
addresses are deleted per fragment by tasks that never start a Python worker (in pylance's tasks a
merge of 1,000,000 rows spent 2 s moving offsets into Python and grouping them). Each task answers,
per fragment it touched, only the new deletion file's description; the driver sets it on the
fragment's metadata of the version the deletions build on, so every other field of the fragment
(data files, row ids, version metadata) stays exactly as pylance holds it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from lance.fragment import FragmentMetadata
from pyspark.sql import DataFrame

from dbt.adapters.lancens.spark.java_classes import java_class
from dbt.adapters.lancens.spark.row_changes import by_fragment

if TYPE_CHECKING:
    import lance

DELETIONS_CLASS = "org.dbtlancens.spark.FragmentDeletions"
REPEATED = "!repeated"  # FragmentDeletions.REPEATED: an address occurred twice


def delete_in_jvm(
    addresses: DataFrame,
    dataset: lance.LanceDataset,
    location: str,
    storage_options: Mapping[str, str],
    repeated: Exception | None = None,
) -> tuple[list[int], list[FragmentMetadata]]:
    """`row_changes.delete_with_tasks` by JVM tasks: delete the rows at `addresses` (row addresses
    in `dataset`'s version, the table at `location`); return (ids of fragments left without rows,
    updated fragments), nothing committed. `repeated`: raised when an address occurs twice."""
    spark = addresses.sparkSession
    answers = java_class(spark._jvm, DELETIONS_CLASS).delete(
        by_fragment(addresses)._jdf,
        location,
        json.dumps(dict(storage_options)),
        int(dataset.version),
        repeated is not None,
    )
    removed, updated = [], []
    for answer in (str(text) for text in answers):
        if answer == REPEATED and repeated is not None:
            raise repeated
        touched = json.loads(answer)
        fragment_id, deletion = touched["fragment_id"], touched["deletion_file"]
        if deletion is None:
            removed.append(fragment_id)
            continue
        stored = dataset.get_fragment(fragment_id)
        if stored is None:
            raise LookupError(f"fragment {fragment_id} is not in version {dataset.version} of {location}")
        metadata = {**stored.metadata.to_json(), "deletion_file": deletion}
        updated.append(FragmentMetadata.from_json(json.dumps(metadata)))
    return sorted(removed), sorted(updated, key=lambda fragment: fragment.id)
