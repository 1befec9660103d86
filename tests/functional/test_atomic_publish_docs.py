"""Atomic publish with persist_docs: refused before the run starts, with a message saying why.

A run's table becomes visible as one staged version; Lance writes descriptions as a version of
their own, which that staged version cannot carry. So a run with atomic publish that selects a
table model with persist_docs (new or existing) stops in its on-run-start hook: no node runs,
nothing is written, no staging is left behind. Runs that do not select it are not affected.
"""

from __future__ import annotations

import os

import lance
import pytest
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject

DOCUMENTED = (
    "{{ config(materialized='table', persist_docs={'relation': true, 'columns': true}) }} select 1 as id"
)
PROPERTIES = """
version: 2
models:
  - name: documented
    description: "a documented model"
    columns:
      - name: id
        description: "the id"
"""


class TestAtomicPublishPersistDocs(AtomicPublishProject):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "plain.sql": "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen",
            "documented.sql": DOCUMENTED,
            "schema.yml": PROPERTIES,
        }

    def test_refused_before_the_run_starts(self, project, dbt_profile_target) -> None:
        root, schema = dbt_profile_target["root"], project.test_schema
        namespace = DirectoryNamespace(root)
        run_dbt(["run", "--select", "plain"])  # not selected: persist_docs elsewhere does not matter
        assert namespace.describe_table([schema, "plain"]).version == 1
        listing = sorted(os.listdir(root))

        with pytest.raises(DbtRuntimeError) as refused:  # dbt stops at its on-run-start hook
            run_dbt(["run", "--vars", "{gen: 2}"], expect_pass=False)
        assert "atomic publish cannot persist docs" in refused.value.msg
        assert "model documented set persist_docs" in refused.value.msg
        assert not namespace.table_exists([schema, "documented"])
        plain = namespace.describe_table([schema, "plain"])
        assert plain.version == 1
        assert lance.dataset(plain.location).to_table().column("gen").to_pylist() == [1]
        assert sorted(os.listdir(root)) == listing  # no staging directory, no new table directory
