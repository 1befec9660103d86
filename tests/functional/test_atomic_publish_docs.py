"""Atomic publish with persist_docs: the descriptions are published with the rows they describe.

Lance writes descriptions as a version of their own (an `UpdateConfig` transaction); in an atomic
run it is staged on top of the run's staged version of the table and published in the run's one
`__manifest` commit, so no reader sees the new rows without their descriptions, and a failed run
publishes neither.
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject

DOCUMENTED = (
    "{{ config(materialized='table', persist_docs={'relation': true, 'columns': true}) }} "
    "select {{ var('gen', 1) }} as id"
)
PROPERTIES = """
version: 2
models:
  - name: documented
    description: "{{ var('about', 'a documented model') }}"
    columns:
      - name: id
        description: "the id"
"""
BROKEN = "{{ config(materialized='table') }} select * from {{ ref('documented') }} where assert_true(id < 0)"


def _describe(root: str, schema: str) -> tuple[int, str | None, str | None, list[int]]:
    """The table's latest version, its description, its column's description and its rows."""
    info = DirectoryNamespace(root).describe_table([schema, "documented"])
    dataset = lance.dataset(info.location)
    column = (dataset.schema.field("id").metadata or {}).get(b"comment")
    return (
        dataset.version,
        dataset.metadata.get("comment"),
        column.decode() if column else None,
        dataset.to_table()["id"].to_pylist(),
    )


def _docs_arrive_with_rows(root: str, schema: str, rows_version: int, docs_version: int) -> None:
    """No `__manifest` version holds the rows' version row without the descriptions' one."""
    manifest = lance.dataset(f"{root}/__manifest")
    rows, docs = f"{schema}$documented${rows_version}", f"{schema}$documented${docs_version}"
    for version in manifest.versions():
        ids = manifest.checkout_version(version["version"]).to_table(columns=["object_id"])["object_id"]
        present = set(ids.to_pylist())
        assert (rows in present) == (docs in present), f"__manifest version {version['version']}"


class TestAtomicPublishPersistDocs(AtomicPublishProject):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"documented.sql": DOCUMENTED, "schema.yml": PROPERTIES, "broken.sql": BROKEN}

    def test_descriptions_are_published_with_the_rows(self, project, dbt_profile_target) -> None:
        root, schema = dbt_profile_target["root"], project.test_schema
        run_dbt(["run", "--select", "documented"])  # a new table: rows 1, descriptions 2
        assert _describe(root, schema) == (2, "a documented model", "the id", [1])
        _docs_arrive_with_rows(root, schema, 1, 2)

        run_dbt(["run", "--select", "documented", "--vars", "{gen: 2, about: 'rebuilt'}"])
        assert _describe(root, schema) == (4, "rebuilt", "the id", [2])
        _docs_arrive_with_rows(root, schema, 3, 4)

        # unchanged descriptions: the rows' version alone
        run_dbt(["run", "--select", "documented", "--vars", "{gen: 3, about: 'rebuilt'}"])
        assert _describe(root, schema) == (5, "rebuilt", "the id", [3])

    def test_a_failed_run_publishes_neither_rows_nor_descriptions(self, project, dbt_profile_target) -> None:
        root, schema = dbt_profile_target["root"], project.test_schema
        run_dbt(["run", "--select", "documented"])
        before = _describe(root, schema)
        run_dbt(
            ["run", "--select", "documented", "broken", "--vars", "{gen: 9, about: 'never'}"],
            expect_pass=False,
        )
        assert _describe(root, schema) == before
