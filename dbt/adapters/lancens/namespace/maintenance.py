"""Keeping ``__manifest``'s indexes current and its fragments few, at amortised cost.

Each engine commit adds one small fragment. A scalar index covers only the fragments it was built
or last optimised on, and native pylance creates none by default (its Overwrite commits also leave
none behind), so after a write:

* an index the spec asks for that is missing is created (a native or pre-index manifest);
* once ``UNINDEXED_FRAGMENTS`` fragments are not covered, the indexes are optimised (new rows are
  merged into them, an incremental step, not a rebuild);
* once there are ``COMPACT_AT_FRAGMENTS`` fragments, they are compacted into one and the indexes
  are optimised right after (Lance remaps them onto the new fragment, but the rows that were not
  indexed before are still not).

Never on every commit: with the thresholds below, about one commit in 16 optimises and one in 64
compacts. Each step is its own Lance commit; one that loses a race with another writer is skipped
(the next write tries again) because the manifest's content is the same either way.
"""

from __future__ import annotations

from typing import Literal

import lance
from lance.commit import CommitConflictError

IndexType = Literal["BTREE", "BITMAP", "LABEL_LIST"]
INDEXES: tuple[tuple[str, IndexType, str], ...] = (
    ("object_id", "BTREE", "object_id_btree"),
    ("object_type", "BITMAP", "object_type_bitmap"),
    ("base_objects", "LABEL_LIST", "base_objects_label_list"),
)
UNINDEXED_FRAGMENTS = 16
COMPACT_AT_FRAGMENTS = 64


def _skipped_on_conflict(exc: Exception) -> bool:
    return (
        isinstance(exc, CommitConflictError)
        or "conflict" in str(exc).lower()
        or "concurrent" in str(exc).lower()
    )


def upkeep(dataset: lance.LanceDataset) -> bool:
    """Run whatever upkeep ``dataset`` (the latest version, just written) is due; True when it
    committed anything (``dataset`` is then at a newer version)."""
    commits = 0
    try:
        fragments = {fragment.fragment_id for fragment in dataset.get_fragments()}
        compacted = len(fragments) >= COMPACT_AT_FRAGMENTS
        if compacted:
            dataset.optimize.compact_files()
            commits += 1
            fragments = {fragment.fragment_id for fragment in dataset.get_fragments()}
        present = {index.name: index for index in dataset.describe_indices()}
        missing = [spec for spec in INDEXES if spec[2] not in present]
        for column, index_type, name in missing:
            dataset.create_scalar_index(column, index_type, name=name)
            commits += 1
        # A compacted fragment mixes indexed rows with rows that were not: the remapped index
        # then covers the fragment but not those rows, so compaction is always followed by this.
        if not missing and (
            compacted or _unindexed(present["object_id_btree"], fragments) >= UNINDEXED_FRAGMENTS
        ):
            dataset.optimize.optimize_indices()
            commits += 1
    except (OSError, ValueError) as exc:
        if not _skipped_on_conflict(exc):
            raise
    return commits > 0


def _unindexed(index: object, fragments: set[int]) -> int:
    covered: set[int] = set()
    for segment in getattr(index, "segments", []):
        covered.update(segment.fragment_ids)
    return len(fragments - covered)


def coverage(dataset: lance.LanceDataset) -> dict[str, int]:
    """Rows not covered, per spec index name (absent index: every row); for tests and benchmarks."""
    present = {index.name for index in dataset.describe_indices()}
    total = dataset.count_rows()
    return {
        name: (dataset.stats.index_stats(name)["num_unindexed_rows"] if name in present else total)
        for _, _, name in INDEXES
    }
