"""A sentence-transformers BERT encoder in NumPy: WordPiece tokenizer, encoder layers, mean pooling,
L2 normalisation, for a model directory as sentence-transformers saves it (`config.json`,
`vocab.txt`, `model.safetensors`). CPU only, no PyTorch: `minilm.py` runs all-MiniLM-L6-v2 with it.
"""

from __future__ import annotations

import json
import math
import struct
import unicodedata
from pathlib import Path

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a `.safetensors` file (an 8-byte header size, a JSON header, raw data)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    (size,) = struct.unpack("<Q", bytes(data[:8]))
    header = json.loads(bytes(data[8 : 8 + size]))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[8 + size + start : 8 + size + end]
        # copied: the data may start at any byte, and BLAS multiplies only aligned arrays fast
        tensors[name] = np.frombuffer(raw, dtype=_DTYPES[info["dtype"]]).reshape(info["shape"]).copy()
    return tensors


class WordPiece:
    """BERT's uncased tokenizer: lower case, accents stripped, split on spaces and punctuation,
    then the longest vocabulary pieces (`##` continues a word)."""

    def __init__(self, vocab: Path, max_length: int) -> None:
        words = vocab.read_text(encoding="utf-8").splitlines()
        self.ids = {word: index for index, word in enumerate(words)}
        self.max_length = max_length

    def encode(self, text: str) -> list[int]:
        pieces = [self.ids["[CLS]"]]
        for word in self._words(text):
            pieces.extend(self._pieces(word))
        return [*pieces[: self.max_length - 1], self.ids["[SEP]"]]

    def _words(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn" and not _is_control(c))
        words: list[str] = []
        for chunk in text.split():
            current = ""
            for char in chunk:
                if _is_punctuation(char) or _is_cjk(char):
                    words += [current, char] if current else [char]
                    current = ""
                else:
                    current += char
            if current:
                words.append(current)
        return words

    def _pieces(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.ids["[UNK]"]]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    pieces.append(self.ids[piece])
                    break
                end -= 1
            if end == start:
                return [self.ids["[UNK]"]]
            start = end
        return pieces


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence embeddings of a BERT model directory."""

    def __init__(self, directory: Path, max_length: int = 256) -> None:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.weights = read_safetensors(directory / "model.safetensors")
        self.dimension = int(config["hidden_size"])
        self.tokenizer = WordPiece(
            directory / "vocab.txt", min(max_length, config["max_position_embeddings"])
        )

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        ids = [self.tokenizer.encode(text) for text in texts]
        out = np.zeros((len(texts), self.dimension), np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # batches of similar lengths pad less
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._encode([ids[i] for i in rows])
        return out

    def _encode(self, ids: list[list[int]]) -> np.ndarray:
        w = self.weights
        length = max(len(row) for row in ids)
        tokens = np.zeros((len(ids), length), np.int64)
        mask = np.zeros((len(ids), length), np.float32)
        for row, pieces in enumerate(ids):
            tokens[row, : len(pieces)] = pieces
            mask[row, : len(pieces)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][tokens]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _layer(self, x: np.ndarray, bias: np.ndarray, prefix: str) -> np.ndarray:
        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(name: str) -> np.ndarray:
            projected = self._dense(x, prefix + f"attention.self.{name}")
            return projected.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / math.sqrt(size) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = self._norm(
            x + self._dense(context, prefix + "attention.output.dense"), prefix + "attention.output.LayerNorm"
        )
        inner = _gelu(self._dense(x, prefix + "intermediate.dense"))
        return self._norm(x + self._dense(inner, prefix + "output.dense"), prefix + "output.LayerNorm")

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        # one 2-D product: NumPy multiplies a stack of matrices by a transposed one without BLAS
        weight = self.weights[name + ".weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T + self.weights[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[0])

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.weights[name + ".weight"] + self.weights[
            name + ".bias"
        ]


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7)."""
    z = x / math.sqrt(2.0)  # a Python float keeps float32 (a NumPy float64 would widen it)
    sign, z = np.sign(z), np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = sign * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)
