"""Build the sample project (a copy), generate its docs, and check target/catalog.json against the Lance
tables on disk, read with pylance: every built table and view is there with its columns, Spark types
in order, row counts, persisted descriptions, and YAML sources pointing at namespace tables."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.spark.types import to_spark_type

SAMPLE = Path(__file__).resolve().parents[2] / "sample_project"
# Sources are not part of the sample project; this copy declares its seeds as one.
SOURCES_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}.raw"
    tables:
      - name: raw_orders
      - name: raw_customers
"""


@pytest.fixture(scope="module")
def built_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("sample") / "sample_project"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", "warehouse"))
    (project / "models" / "catalog_sources.yml").write_text(SOURCES_YML)
    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    run_dbt(["build", "--exclude-resource-type", "test", *dirs])  # data tests add time, not tables
    run_dbt(["docs", "generate", *dirs])
    return project


def test_catalog_matches_lance_tables(built_sample: Path) -> None:
    catalog = json.loads((built_sample / "target" / "catalog.json").read_text())
    assert catalog["errors"] is None
    namespace = DirectoryNamespace(str(built_sample / "warehouse"))
    tables = [e for e in namespace.list_objects() if e.object_type == "table"]
    assert {".".join(e.id) for e in tables} >= {"analytics.marts.orders", "analytics.raw.raw_orders"}
    entries = {**catalog["nodes"], **catalog["sources"]}
    by_relation = {(n["metadata"]["schema"], n["metadata"]["name"]): n for n in entries.values()}
    for entry in tables:
        node = by_relation[(".".join(entry.id[:-1]), entry.id[-1])]
        dataset = lance.dataset(entry.location)
        assert node["metadata"]["type"] == "table"
        assert [(c["name"], c["type"], c["index"]) for c in node["columns"].values()] == [
            (f.name, to_spark_type(f.type).simpleString(), i) for i, f in enumerate(dataset.schema, 1)
        ]
        assert node["stats"]["row_count"]["value"] == dataset.count_rows() > 0
        assert node["stats"]["version"]["value"] == dataset.version
        assert node["stats"]["location"]["value"] == entry.location


def test_views_descriptions_and_sources(built_sample: Path) -> None:
    catalog = json.loads((built_sample / "target" / "catalog.json").read_text())
    nodes = catalog["nodes"]
    view = nodes["model.jaffle_lance.stg_customers"]
    assert view["metadata"]["type"] == "view"
    assert view["metadata"]["schema"] == "analytics.staging"
    assert list(view["columns"]) == ["customer_id", "first_name", "last_name", "email", "note"]
    assert view["stats"]["has_stats"]["value"] is False
    # marts persist docs: the catalog reads them back from Lance table and field metadata
    orders = nodes["model.jaffle_lance.orders"]
    assert orders["metadata"]["comment"].startswith("One row per order")
    assert orders["columns"]["amount"]["comment"] == "Total paid for the order."
    assert orders["columns"]["status"]["comment"] is None
    location = orders["stats"]["location"]["value"]
    assert lance.dataset(location).schema.field("amount").metadata[b"comment"] == b"Total paid for the order."
    source = catalog["sources"]["source.jaffle_lance.raw.raw_orders"]
    assert source["columns"] == nodes["seed.jaffle_lance.raw_orders"]["columns"]
    assert source["columns"]["order_date"]["type"] == "date"
    assert "model.jaffle_lance.stg_payments" not in nodes  # ephemeral: nothing in the namespace
