"""Embedding functions the tests register in LanceDB's registry (named in a model's `embeddings`
config with `imports: ['tests.embedding_functions']`, so Spark's Python workers register them too).

`lancens-test-hash`: a deterministic hashed bag of words, L2-normalised; with `log`, every text it
embeds is appended to that file (one JSON line), so a test sees exactly which rows were embedded.
`lancens-test-broken`: a model that cannot load.
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
from lancedb.embeddings import TextEmbeddingFunction, register


def hashed_vector(text: str, dims: int = 16) -> np.ndarray:
    vector = np.zeros(dims, np.float32)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.md5(word.encode()).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


@register("lancens-test-hash")
class HashEmbeddings(TextEmbeddingFunction):
    dims: int = 16
    log: str | None = None

    def ndims(self) -> int:
        return self.dims

    def generate_embeddings(self, texts):  # type: ignore[no-untyped-def]
        texts = list(texts)
        if self.log:
            with open(self.log, "a") as handle:
                handle.write("".join(json.dumps(text) + "\n" for text in texts))
        return [hashed_vector(text, self.dims) for text in texts]


@register("lancens-test-broken")
class BrokenEmbeddings(TextEmbeddingFunction):
    path: str = "/nonexistent/model"

    def ndims(self) -> int:
        raise OSError(f"cannot load the model at {self.path}")

    def generate_embeddings(self, texts):  # type: ignore[no-untyped-def]
        raise OSError(f"cannot load the model at {self.path}")


def logged_texts(path: str) -> list[str]:
    try:
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except FileNotFoundError:
        return []
