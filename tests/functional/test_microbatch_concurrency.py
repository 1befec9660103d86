"""Microbatch batches run concurrently (the adapter declares MicrobatchConcurrency) and lose nothing.

dbt runs the first and last batch alone and the others on its threads; each batch's query runs in
parallel and its delete-then-append change is committed while no other batch of this process
commits to the table. Every batch is one Lance version, rows arrive exactly once, and a rerun of the
same batches (each deleting the rows it replaces) keeps them exactly once.
"""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.metadata.maintenance import optimize_table
from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.microbatch_events import events_model, window

DAYS = 8
EVENTS = events_model(DAYS, 400)
BATCHED = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          batch_size='day', begin='2024-01-01', concurrent_batches=true,
          indexes=[{'columns': ['id'], 'type': 'btree'}]) }}
select id, event_ts from {{ ref('events') }}
"""
WINDOW = window(DAYS)


class TestMicrobatchConcurrency:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"events.sql": EVENTS, "batched.sql": BATCHED}

    def _batched(self, project, root: str) -> lance.LanceDataset:
        info = DirectoryNamespace(root).describe_table([project.test_schema, "batched"])
        return lance.dataset(info.location, version=info.version)

    def _batch_results(self, results) -> int:
        (result,) = [r for r in results if r.node.name == "batched"]
        assert not result.batch_results.failed
        return len(result.batch_results.successful)

    def test_concurrent_batches_commit_every_row_once(self, project, dbt_profile_target: dict) -> None:
        root = dbt_profile_target["root"]
        run_dbt(["run", "--select", "events"])
        results, log = run_dbt_and_capture(["--debug", "run", "--select", "batched", *WINDOW])
        assert self._batch_results(results) == DAYS
        assert "is being run concurrently" in log  # dbt took the parallel path for the middle batches
        batched = self._batched(project, root)
        assert sorted(batched.to_table(columns=["id"]).column("id").to_pylist()) == list(range(1, 401))
        first_run_version = batched.version

        # Compact the table into one fragment, then run the same batches again, concurrently: each
        # replaces its day's rows with deletion vectors on that one fragment, which every other batch
        # changes too. Committed on the same version they would conflict; none may fail, lose or
        # double a row.
        optimize_table(DirectoryNamespace(root), [project.test_schema, "batched"], {})
        assert len(self._batched(project, root).get_fragments()) == 1
        results, log = run_dbt_and_capture(["--debug", "run", "--select", "batched", *WINDOW])
        assert self._batch_results(results) == DAYS
        assert "is being run concurrently" in log
        batched = self._batched(project, root)
        assert sorted(batched.to_table(columns=["id"]).column("id").to_pylist()) == list(range(1, 401))
        # one version per batch (rows), plus the index optimisations that follow a batch's rows
        assert batched.version >= first_run_version + DAYS
        assert [index.name for index in batched.describe_indices()]  # the btree survived every batch
        assert batched.to_table(columns=["id"], filter="id = 123").num_rows == 1


class TestMicrobatchConcurrencyVersionManagement(TestMicrobatchConcurrency):
    """The same with table version management: every batch's version is a `__manifest` row."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("microbatch_tvm_root"))
        return {"type": "lancens", "root": root, "master": "local[2]", "threads": 2,
                "table_version_management": True}  # fmt: skip
