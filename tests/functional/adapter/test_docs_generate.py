"""dbt-tests-adapter's `docs generate` suites: types are Spark's as `describe` prints them, tables carry
the Lance stats (checked against the table on disk with pylance), views have none."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences

from tests.functional.test_catalog_lance import VIEW_STATS, lance_stats

TYPES = {
    "id_type": "bigint",
    "text_type": "string",
    "time_type": "timestamp",
    "view_type": "view",
    "table_type": "table",
}


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, lancens_root: str) -> dict:
        expected = expected_catalog.base_expected_catalog(
            project,
            role=None,  # no owner is recorded for these tables
            model_stats=VIEW_STATS,  # both models are views
            seed_stats=lance_stats(lancens_root, [project.test_schema, "seed"]),
            **TYPES,
        )
        # A custom schema nests under the target schema (README): `test` is `<target>.test`.
        expected["nodes"]["model.test.second_model"]["metadata"]["schema"] = f"{project.test_schema}.test"
        return expected


class TestDocsGenReferences(BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, lancens_root: str) -> dict:
        return expected_catalog.expected_references_catalog(
            project,
            role=None,  # no owner is recorded for these tables
            bigint_type="bigint",
            model_stats=lance_stats(lancens_root, [project.test_schema, "ephemeral_summary"]),
            seed_stats=lance_stats(lancens_root, [project.test_schema, "seed"]),
            view_summary_stats=VIEW_STATS,
            **TYPES,
        )
