"""File access for everything that is not a Lance dataset: markers, listings, staged manifests.

One fsspec filesystem per namespace, configured from the same storage options Lance gets, so marker
files and table directories are seen identically by both. ``put_if_not_exists`` uses the store's own
conditional create (local ``O_EXCL``, S3 ``If-None-Match: *`` through s3fs) because reservations and
version files must never be overwritten by a racing writer.

On AWS S3 two conditional writes of one key at the same moment may get ``409
ConditionalRequestConflict`` (the other request still in progress) instead of one success and one
``412``: the request is asked again after a short wait, so the caller still learns which of the two
it was (created, or ``FileExistsError``) rather than an error that says neither.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from dbt.adapters.lancens.namespace.config import root_scheme, s3fs_kwargs

_MEMORY_LOCK = threading.Lock()
_CONFLICT_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def filesystem_for(root: str, storage_options: Mapping[str, str]) -> fsspec.AbstractFileSystem:
    """The fsspec filesystem for ``root`` with Lance-style storage options translated."""
    protocol = root_scheme(root)
    if protocol in ("s3", "s3a"):
        # No listing cache: Lance (Rust) and other processes write under the root behind s3fs's back,
        # so a cached listing of `_versions/` would hide a manifest staged a moment ago.
        return fsspec.filesystem("s3", use_listings_cache=False, **s3fs_kwargs(storage_options))
    return fsspec.filesystem(protocol)


class Storage:
    """Thin wrapper over an fsspec filesystem; every path argument is an absolute path or URI."""

    def __init__(self, root: str, storage_options: Mapping[str, str]) -> None:
        self.root = root
        self.fs = filesystem_for(root, storage_options)
        self.local = isinstance(self.fs, LocalFileSystem)
        self._is_s3 = "s3" in self.fs.protocol

    def _path(self, path: str) -> str:
        return str(self.fs._strip_protocol(path))

    def join(self, *parts: str) -> str:
        """Join ``parts`` under the root (with ``/`` for URIs, ``os.sep`` semantics for local paths)."""
        base = self.root.rstrip("/") if not self.root.endswith("://") else self.root
        return "/".join([base, *parts])

    def put_if_not_exists(self, path: str, data: bytes) -> None:
        """Create ``path`` with ``data`` only if it does not exist; raise FileExistsError otherwise."""
        target = self._path(path)
        if self.local:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "xb") as handle:
                handle.write(data)
            return
        if self._is_s3:
            self._create_on_s3(path, target, data)
            return
        with _MEMORY_LOCK:
            if self.fs.exists(target):
                raise FileExistsError(path)
            self.fs.pipe_file(target, data)

    def _create_on_s3(self, path: str, target: str, data: bytes) -> None:
        """``If-None-Match: *`` PUT, asked again while S3 answers that a conflicting conditional
        write is in progress (the outcome of the race is then not known yet)."""
        for wait in (*_CONFLICT_WAITS, None):
            try:
                self.fs.pipe_file(target, data, mode="create")
                return
            except FileExistsError:
                raise
            except OSError as error:
                if not _conditional_conflict(error):
                    raise
                if wait is None:
                    raise OSError(
                        f"{path}: S3 kept answering ConditionalRequestConflict (409) to its "
                        f"conditional create after {len(_CONFLICT_WAITS)} retries"
                    ) from error
                time.sleep(wait)

    def read_bytes(self, path: str) -> bytes:
        return bytes(self.fs.cat_file(self._path(path)))

    def write_bytes(self, path: str, data: bytes) -> None:
        target = self._path(path)
        if self.local:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        self.fs.pipe_file(target, data)

    def copy(self, source: str, destination: str) -> None:
        target = self._path(destination)
        if self.local:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        self.fs.copy(self._path(source), target)

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._path(path)))

    def ls(self, path: str) -> list[dict[str, Any]]:
        """Entries directly under ``path`` (name = absolute fsspec path); [] when it does not exist."""
        try:
            return list(self.fs.ls(self._path(path), detail=True))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def names(self, path: str) -> list[str]:
        """Base names of the entries directly under ``path``; [] when it does not exist.

        Local directories are read with ``os.listdir`` (no per-entry stat): describe/exists call
        this for every table they resolve."""
        if self.local:
            try:
                return os.listdir(self._path(path))
            except (FileNotFoundError, NotADirectoryError):
                return []
        return [entry["name"].rstrip("/").rsplit("/", 1)[-1] for entry in self.ls(path)]

    @property
    def lists_in_order(self) -> bool:
        """Whether a listing of ``_versions/`` returns the newest V2 name first in one bounded
        request (S3), so Lance's own open finds the latest version with one LIST. Elsewhere
        listings are local and cheap, and Lance keeps its ``latest_version_hint.json`` beside the
        versions."""
        return self._is_s3

    def info(self, path: str) -> dict[str, Any]:
        return dict(self.fs.info(self._path(path)))

    def rm(self, path: str, recursive: bool = False) -> None:
        self.fs.rm(self._path(path), recursive=recursive)

    def remove_if_empty(self, path: str) -> None:
        """Remove the directory ``path`` when nothing is in it (local roots; an object store has no
        directories). Another process's entry in it keeps it, and so does a concurrent removal."""
        if self.local:
            try:
                os.rmdir(self._path(path))
            except OSError:
                pass

    def rm_tree(self, path: str) -> None:
        """Remove ``path`` and everything below; already gone is fine, and so is another process
        removing the same tree at the same time (each walk then meets files the other deleted)."""
        for _ in range(10):
            try:
                self.fs.rm(self._path(path), recursive=True)
            except FileNotFoundError:
                pass
            if not self.exists(path):
                return

    def files(self, path: str) -> dict[str, dict[str, Any]]:
        """Every file under the directory ``path``: its path relative to ``path`` -> its fsspec info
        (``name``: the store's own path, without scheme). Empty when there is none."""
        base = self._path(path).rstrip("/")
        try:
            found = self.fs.find(base, withdirs=False, detail=True)
        except FileNotFoundError:
            return {}
        return {
            str(name)[len(base) :].lstrip("/"): {**info, "name": str(name)}
            for name, info in found.items()
            if info.get("type") != "directory"
        }

    def has_files(self, path: str) -> bool:
        """True when ``path`` is a directory holding at least one file (object-store prefix semantics)."""
        target = self._path(path)
        if self.local:
            if not os.path.isdir(target):
                return False
            return any(files for _, _, files in os.walk(target))
        if self._is_s3:
            return bool(self.ls(path))  # S3 has no empty directories: any child means a file below
        try:
            return bool(self.fs.find(target, withdirs=False))
        except FileNotFoundError:
            return False


def _conditional_conflict(error: BaseException) -> bool:
    """Whether ``error`` (as s3fs raised it, the botocore error as its cause) is S3's
    ``ConditionalRequestConflict``."""
    cause = error.__cause__
    response = getattr(cause, "response", None)
    code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
    return code == "ConditionalRequestConflict"
