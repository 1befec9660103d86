"""Keeping ``__manifest``'s indexes current and its files few, at amortised cost.

Each engine commit adds one small fragment, and the rows it rewrites or deletes leave a deletion
file on the fragment that held them (a create rewrites its parent namespace's row, the guard that
makes a racing drop of the namespace conflict). A full read of a version GETs every data and
deletion file, and every process starts with one, so without upkeep the cost of the start of a
run grows with every commit (17 commits: 17 fragments, 16 deletion files). A scalar index covers
only the fragments it was built or last optimised on, and native pylance creates none by default
(its Overwrite commits also leave none behind). Upkeep therefore keeps the manifest at ONE indexed
fragment (and its deletion file) plus a short unindexed tail, whatever the number of commits:

* **the unindexed tail** (the fragment no index covers, the newest rows): every insert or replace
  carries the tail's live rows along unchanged (``carried_rows``), so Lance writes them into that
  commit's one new fragment and drops the old tail fragment, now fully deleted: the tail is
  always one fragment. No commit of its own; the price is that such a
  commit conflicts with every concurrent ``__manifest`` commit (as every commit to a small
  manifest does), and the loser plans again;
* **the fold**: once ``UNINDEXED_ROWS`` live rows are not covered, the indexes are optimised (the
  tail's rows merged in, an incremental step, not a rebuild) and ``compact_files`` then rewrites
  the indexed fragments as one, their deletions materialised; Lance remaps the indexes onto the
  new fragment, so they stay exact without another commit;
* **a backstop**: ``COMPACT_AT_FRAGMENTS`` fragments (racing writers each add one) or deleted rows
  at ``DELETED_SHARE`` of the rows stored (drops add none) compact without a fold.

A full read so fetches at most ``MOST_FILES`` files (measured after each of 300 creates in 10
namespaces: at most 3, mean 2.9; 4 after a drop; where compacting at 10 fragments let 2-17
accumulate, at most 15, mean 8.6). The fold rewrites the whole manifest, about every
``UNINDEXED_ROWS / 2`` creates (each adds its row and rewrites its parent's): 40 ms at 10,100 rows
on a local disk. A missing index the spec asks for (a native or pre-index manifest) is created
first. Each step is its own Lance commit; one that loses a race with another writer is skipped (the
next write tries again) because the manifest's rows are the same either way, and a reader of an
older version keeps reading it: nothing here deletes a file.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

import lance
from lance.commit import CommitConflictError
from lance.fragment import LanceFragment

IndexType = Literal["BTREE", "BITMAP", "LABEL_LIST"]
INDEXES: tuple[tuple[str, IndexType, str], ...] = (
    ("object_id", "BTREE", "object_id_btree"),
    ("object_type", "BITMAP", "object_type_bitmap"),
    ("base_objects", "LABEL_LIST", "base_objects_label_list"),
)
MOST_FILES = 4
"""What a full read of the latest version fetches at most while no writers race: the indexed
fragment, its deletion file and the tail's one fragment, with a deletion file when the last commit
was a drop (it deletes rows and writes none, so it carries nothing). Racing commits each add a
fragment until the backstop compacts them."""
SMALL_ROWS = 64
"""Up to this many live rows, ``__manifest`` is kept as ONE fragment without deletion files: each
insert or replace carries every other row along unchanged (``carried_rows``). A full read, which
every process makes at its start, then GETs one data file instead of a few data and deletion
files (on S3 each is a request); rewriting so few rows costs the commit less than that. The
indexes are not optimised meanwhile (they cover none of the rewritten fragment): a read of so few
rows never uses them (``manifest.POINT_LOOKUP_ROWS``), and a query Lance plans with them scans the
rows they miss. Past it, the tail rule above takes over, and the first fold indexes them."""
UNINDEXED_ROWS = 32
"""When the fold runs: rows the index misses are scanned by a point lookup and carried by every
commit, so this many cost little; each fold rewrites the whole manifest, so it is not every few
commits."""
COMPACT_AT_FRAGMENTS = 4
DELETED_SHARE = 0.25
"""Of the rows stored (and at least ``UNINDEXED_ROWS``): drops leave deleted rows in fragments
without adding any, and a read still fetches them. A quarter keeps that bounded without compacting
for every few drops."""


def _skipped_on_conflict(exc: Exception) -> bool:
    return (
        isinstance(exc, CommitConflictError)
        or "conflict" in str(exc).lower()
        or "concurrent" in str(exc).lower()
    )


def _live_rows(fragment: LanceFragment) -> int:
    deletion = fragment.metadata.deletion_file
    return int(fragment.metadata.physical_rows) - (deletion.num_deleted_rows if deletion is not None else 0)


def _unindexed(dataset: lance.LanceDataset) -> list[LanceFragment] | None:
    """The fragments the ``object_id`` index does not cover, None without the index; read from the
    version's manifest, no data file is opened."""
    covered: set[int] = set()
    indexed = False
    for index in dataset.describe_indices():
        if index.name == "object_id_btree":
            indexed = True
            for segment in index.segments:
                covered.update(segment.fragment_ids)
    if not indexed:
        return None
    return [fragment for fragment in dataset.get_fragments() if fragment.fragment_id not in covered]


def carried_rows(dataset: lance.LanceDataset, written: Collection[str]) -> list[dict[str, object]]:
    """The live rows of the unindexed tail that the next commit (the ids in ``written`` written or
    deleted by it) should rewrite unchanged. Only the tail is carried: moving indexed rows would
    un-index them. Without the index (a native or pre-index manifest) nothing is: upkeep creates
    it, and compacts if need be."""
    fragments = dataset.get_fragments()
    if fragments and _small(fragments):
        every: list[dict[str, object]] = dataset.to_table().to_pylist()
        return [row for row in every if row["object_id"] not in written]
    tail = _unindexed(dataset)
    if not tail:
        return []
    rows: list[dict[str, object]] = dataset.scanner(fragments=tail).to_table().to_pylist()
    return [row for row in rows if row["object_id"] not in written]


def _small(fragments: list[LanceFragment]) -> bool:
    """Whether the manifest is small enough to be rewritten whole by each commit (``SMALL_ROWS``)."""
    return sum(map(_live_rows, fragments)) <= SMALL_ROWS


def upkeep(dataset: lance.LanceDataset) -> bool:
    """Run whatever upkeep ``dataset`` (the latest version, just written) is due; True when it
    committed anything (``dataset`` is then at a newer version)."""
    commits = 0
    try:
        present = {index.name for index in dataset.describe_indices()}
        missing = [spec for spec in INDEXES if spec[2] not in present]
        for column, index_type, name in missing:
            dataset.create_scalar_index(column, index_type, name=name)
            commits += 1
        fragments = dataset.get_fragments()
        unindexed = sum(map(_live_rows, _unindexed(dataset) or []))
        fold = not missing and unindexed >= UNINDEXED_ROWS and not _small(fragments)
        if fold:
            dataset.optimize.optimize_indices()
            commits += 1
            fragments = dataset.get_fragments()
        stored = sum(int(fragment.metadata.physical_rows) for fragment in fragments)
        deleted = stored - sum(map(_live_rows, fragments))
        if (
            (fold and (len(fragments) > 1 or deleted > 0))
            or len(fragments) >= COMPACT_AT_FRAGMENTS
            or deleted >= max(UNINDEXED_ROWS, DELETED_SHARE * stored)
        ):
            dataset.optimize.compact_files(
                materialize_deletions=True, materialize_deletions_threshold=DELETED_SHARE
            )
            commits += 1
    except (OSError, ValueError) as exc:
        if not _skipped_on_conflict(exc):
            raise
    return commits > 0


def coverage(dataset: lance.LanceDataset) -> dict[str, int]:
    """Rows not covered, per spec index name (absent index: every row); for tests and benchmarks."""
    present = {index.name for index in dataset.describe_indices()}
    total = dataset.count_rows()
    return {
        name: (dataset.stats.index_stats(name)["num_unindexed_rows"] if name in present else total)
        for _, _, name in INDEXES
    }


def files(dataset: lance.LanceDataset) -> dict[str, int]:
    """What a full read of ``dataset`` fetches: its fragments' data and deletion files."""
    fragments = dataset.get_fragments()
    return {
        "fragments": len(fragments),
        "data_files": sum(len(fragment.data_files()) for fragment in fragments),
        "deletion_files": sum(fragment.metadata.deletion_file is not None for fragment in fragments),
    }
