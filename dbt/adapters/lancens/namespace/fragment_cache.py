"""A local disk cache of ``__manifest``'s fragments, so that a process reading the catalog of a
root on an object store fetches only what changed since this machine last read it.

Why: a new process (every ``dbt`` command, every Spark worker) reads ``__manifest`` whole, and on
S3 Lance fetches a data file past about 64 KiB one GET per column: a catalog of 10,000 tables cost
9 requests to read against 3 for a dozen, growing with the root. The rows of a data file never
change (Lance names each one uniquely and never rewrites it), and a fragment only ever gains
deletions, so what this machine read of a data file stays true for as long as the file is used.

What a read trusts, and why it never hides a commit:

* which version is the latest, and which fragments, data files and deletion files it holds, always
  come from ``__manifest`` itself (Lance's listing and the version's manifest), never from here;
* an entry is keyed by the root, the fragment id, its data files and its physical row count, so it
  only ever stands for those immutable files;
* the entry records the deletion file its rows were filtered with; when the fragment names another
  one, the live row addresses are listed anew (one GET of the deletion file, no data) and the
  cached rows filtered by them; an address the entry lacks (deletions that shrank, as after a
  restore of an older version) makes it a miss: the fragment is read from the store again.

Any entry that cannot be read is a miss and is replaced; a failure to write one is ignored (the
cache only ever saves requests). Each root keeps its ``KEEP`` most recently used entries.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.compute as pc
from lance.fragment import LanceFragment

_logger = logging.getLogger(__name__)

ROW_ADDRESS = "_rowaddr"
_DELETION_KEY = b"lancens.deletion_file"
KEEP = 16
"""Entries kept per root: the live fragments of a compact ``__manifest`` are a handful
(``maintenance.MOST_FILES``), and a fold replaces them all, so a few versions' worth is plenty."""
STALE_SECONDS = 3600.0
"""Age past which a ``.tmp`` file is a killed writer's, not one being written now."""


class FragmentCache:
    """The cache directory of one root's ``__manifest``; ``read`` returns a version's rows."""

    def __init__(self, directory: str | os.PathLike[str], uri: str) -> None:
        self._uri = uri
        self._directory = Path(directory) / hashlib.sha256(uri.encode()).hexdigest()[:32]

    def read(self, dataset: lance.LanceDataset) -> pa.Table:
        """All live rows of ``dataset``'s version, each fragment from this cache where it holds the
        fragment's data files, from the store otherwise (and then cached)."""
        schema = dataset.schema
        parts = [self._fragment_rows(dataset, schema, fragment) for fragment in dataset.get_fragments()]
        if not parts:
            return schema.empty_table()
        return pa.concat_tables([part.select(schema.names) for part in parts])

    def _fragment_rows(
        self, dataset: lance.LanceDataset, schema: pa.Schema, fragment: LanceFragment
    ) -> pa.Table:
        path = self._entry_path(fragment)
        deletion = fragment.deletion_file() or ""
        cached = self._load(path, schema)
        if cached is not None:
            if _deletion_of(cached) == deletion:
                self._touch(path)
                return cached
            live = dataset.scanner(fragments=[fragment], columns=[], with_row_address=True).to_table()
            kept = cached.filter(pc.is_in(cached[ROW_ADDRESS], value_set=live[ROW_ADDRESS]))
            if kept.num_rows == live.num_rows:
                self._store(path, kept, deletion)
                return kept
        rows = dataset.scanner(fragments=[fragment], with_row_address=True).to_table()
        self._store(path, rows, deletion)
        return rows

    def _entry_path(self, fragment: LanceFragment) -> Path:
        files = "\n".join(data_file.path for data_file in fragment.data_files())
        key = f"{self._uri}\n{fragment.fragment_id}\n{fragment.metadata.physical_rows}\n{files}"
        return self._directory / f"{hashlib.sha256(key.encode()).hexdigest()}.arrow"

    def _load(self, path: Path, schema: pa.Schema) -> pa.Table | None:
        """The entry at ``path``, or None when there is none usable (absent, unreadable, or of
        another schema than the version's, which is then read from the store)."""
        try:
            with pa.OSFile(str(path), "rb") as source:  # read into memory: the entry may be replaced
                table = pa.ipc.open_file(source).read_all()
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException) as exc:
            _logger.debug("catalog cache entry %s unreadable, read from the store: %s", path, exc)
            return None
        expected = [*schema.names, ROW_ADDRESS]
        if table.schema.names != expected or not table.schema.remove(len(schema)).equals(schema):
            return None
        return table

    def _store(self, path: Path, rows: pa.Table, deletion: str) -> None:
        metadata = {**(rows.schema.metadata or {}), _DELETION_KEY: deletion.encode()}
        table = rows.replace_schema_metadata(metadata)
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self._directory, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self._evict()
        except OSError as exc:
            _logger.debug("catalog cache entry %s not written: %s", path, exc)

    def _touch(self, path: Path) -> None:
        try:
            os.utime(path)
        except OSError:
            pass

    def _evict(self) -> None:
        """Keep the ``KEEP`` entries used last (a hit touches its entry), and remove what a killed
        writer left half-written (``.tmp`` files older than ``STALE_SECONDS``)."""
        stale = time.time() - STALE_SECONDS
        for leftover in self._directory.glob("*.tmp"):
            try:
                if leftover.stat().st_mtime < stale:
                    leftover.unlink()
            except FileNotFoundError:
                continue
        entries = []
        for entry in self._directory.glob("*.arrow"):
            try:
                entries.append((entry.stat().st_mtime_ns, entry))
            except FileNotFoundError:
                continue
        for _, entry in sorted(entries, reverse=True)[KEEP:]:
            entry.unlink(missing_ok=True)


def _deletion_of(table: pa.Table) -> str:
    recorded: bytes = (table.schema.metadata or {}).get(_DELETION_KEY, b"")
    return recorded.decode()
