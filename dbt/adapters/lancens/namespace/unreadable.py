"""Which data files a failed read of a Lance dataset (``__manifest``) could not read.

Lance reports a damaged or truncated data file by its byte range alone ("Invalid range 0..2028 for
object of size 1014 bytes"), which tells nobody what to restore. After a read failed, each fragment
is read on its own, and the data files of those that fail are named. It runs only on that failure
path, so reading the version a second time costs nothing a working catalog pays.
"""

from __future__ import annotations

import lance
import pyarrow as pa

from dbt.adapters.lancens.namespace import errors

READ_FAILURES = (OSError, pa.ArrowException)
"""What a Lance read raises for a file it cannot read (an I/O error, or Arrow's ``ArrowInvalid``
wrapping Lance's own)."""


def unreadable_files(uri: str, dataset: lance.LanceDataset) -> list[str]:
    """The data files (full paths) of the fragments of ``dataset`` that cannot be read."""
    failed: list[str] = []
    for fragment in dataset.get_fragments():
        try:
            dataset.scanner(fragments=[fragment]).to_table()
        except READ_FAILURES:
            failed.extend(f"{uri}/data/{data_file.path}" for data_file in fragment.data_files())
    return failed


def read_failure(what: str, uri: str, dataset: lance.LanceDataset, cause: Exception) -> errors.InternalError:
    """The error for a failed read of ``what`` (at ``uri``, version of ``dataset``): the files that
    cannot be read, and what to do; Lance's own message stays at the end."""
    files = unreadable_files(uri, dataset)
    where = f"{what} at {uri}, version {dataset.version}"
    if not files:
        return errors.InternalError(f"{where} cannot be read: {cause}")
    listed = ", ".join(files)
    return errors.InternalError(
        f"{where} cannot be read: data file {listed} is damaged or incomplete; restore it from a "
        f"backup of the root (nothing was changed) ({cause})"
    )
