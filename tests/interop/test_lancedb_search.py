"""LanceDB and pylance search the sample project's dbt-built `documents` table the moment `dbt run` ends:
its vector and full-text indexes are there, its embeddings were computed by the pipeline (LanceDB
searches it by text), and the searches find the expected articles."""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import lancedb
import pytest
from dbt.tests.util import run_dbt

import dbt.adapters.lancens.embeddings.minilm  # noqa: F401 - registers lancens-minilm for LanceDB
from dbt.adapters.lancens.namespace import DirectoryNamespace

SAMPLE = Path(__file__).resolve().parents[2] / "sample_project"
SCHEMA = ["analytics", "marts"]
REFUND_ARTICLES = [5, 6, 7]  # the articles whose body says "refund"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, spark) -> Path:
    project = tmp_path_factory.mktemp("lancedb") / "sample_project"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", "warehouse"))
    run_dbt(["run", "--select", "documents", "--project-dir", str(project), "--profiles-dir", str(project)])
    return project / "warehouse"


def test_lancedb_searches_the_dbt_built_table(warehouse: Path) -> None:
    db = lancedb.connect_namespace("dir", {"root": str(warehouse)})
    assert "documents" in list(db.table_names(namespace_path=SCHEMA))
    table = db.open_table("documents", namespace_path=SCHEMA)
    assert {index.name: index.index_type for index in table.list_indices()} == {
        "embedding_ivf_flat": "IvfFlat",
        "body_fts": "FTS",
        "topic_bitmap": "Bitmap",
    }
    rows = {row["id"]: row for row in table.to_arrow().to_pylist()}
    assert len(rows) == 12

    # vector search: an article's own embedding finds it first (cosine distance 0)
    hits = table.search(rows[6]["embedding"]).distance_type("cosine").limit(3).to_list()
    assert hits[0]["id"] == 6 and hits[0]["_distance"] == pytest.approx(0, abs=1e-5)

    # text search: the table records `lancens-minilm`, so LanceDB embeds the question with it
    hits = table.search("how long does delivery take").distance_type("cosine").limit(1).to_list()
    assert hits[0]["id"] == 8  # "Orders ship the next day and arrive within three days."
    assert table.schema.field("embedding").type.list_size == 384

    # full-text search: exactly the articles that mention refunds
    found = table.search("refund", query_type="fts").limit(10).to_list()
    assert sorted(hit["id"] for hit in found) == REFUND_ARTICLES


def test_pylance_searches_the_dbt_built_table(warehouse: Path) -> None:
    location = DirectoryNamespace(str(warehouse)).describe_table([*SCHEMA, "documents"]).location
    dataset = lance.dataset(location)
    assert dataset.stats.index_stats("embedding_ivf_flat")["num_unindexed_rows"] == 0
    embedding = dataset.to_table(filter="id = 11", columns=["embedding"])["embedding"][0].as_py()
    nearest = dataset.to_table(nearest={"column": "embedding", "q": embedding, "k": 1}, columns=["id"])
    assert nearest["id"].to_pylist() == [11]
    found = dataset.to_table(full_text_query="refund", columns=["id"])["id"].to_pylist()
    assert sorted(found) == REFUND_ARTICLES
