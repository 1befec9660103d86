"""`lancens-minilm` computes all-MiniLM-L6-v2's embeddings: the similarities sentence-transformers
publishes for its example sentences (model card), to four decimals, without PyTorch or network."""

from __future__ import annotations

import numpy as np
import pytest
from lancedb.embeddings import get_registry

import dbt.adapters.lancens.embeddings.minilm  # noqa: F401 - registers lancens-minilm


def test_reference_similarities() -> None:
    function = get_registry().get("lancens-minilm").create()
    assert function.ndims() == 384
    sentences = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    vectors = np.array(function.compute_source_embeddings(sentences))
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1, 1, 1], abs=1e-5)
    similarities = vectors @ vectors.T
    expected = [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]]
    np.testing.assert_allclose(similarities, expected, atol=1e-4)


def test_tokenizer_matches_bert() -> None:
    from dbt.adapters.lancens.embeddings.minilm import _encoder

    # BertTokenizer (uncased): [CLS] it ' s so sunny outside ! [SEP]; accents stripped, ## pieces
    assert _encoder(None, 256).tokenizer.encode("It's so sunny outside!") == [
        101, 2009, 1005, 1055, 2061, 11559, 2648, 999, 102,
    ]  # fmt: skip
    assert _encoder(None, 256).tokenizer.encode("Café") == _encoder(None, 256).tokenizer.encode("cafe")


def test_a_changed_weights_file_is_refused_before_it_is_used(tmp_path) -> None:
    import shutil

    from dbt.adapters.lancens.embeddings import minilm

    packaged = minilm._packaged()  # the installed package passes the check
    copy = tmp_path / "model_files"
    copy.mkdir()
    for name in minilm.PACKAGED_SHA256:
        shutil.copy(packaged / name, copy / name)
    assert minilm.verified(copy) == copy
    with open(copy / "vocab.txt", "a") as vocab:
        vocab.write("extra\n")
    with pytest.raises(OSError, match=r"vocab\.txt is not the published all-MiniLM-L6-v2 file"):
        minilm.verified(copy)
    shutil.copy(packaged / "vocab.txt", copy / "vocab.txt")
    (copy / "config.json").unlink()
    with pytest.raises(OSError, match=r"config\.json cannot be read"):
        minilm.verified(copy)
