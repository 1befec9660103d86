"""A microbatch model in an atomic-publish run: every batch is staged on top of the one before.

The run stages the first batch as it stages any write, and each later batch on the run's staged
content (the table's detached version, or a new table's scratch copy), so the batches' rows are
published together with the run's other tables at its end, one version per batch. A run with a
failed batch publishes nothing and removes the files its batches wrote.
"""

from __future__ import annotations

import os

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject, assert_no_orphan_transactions
from tests.functional.microbatch_events import events_model, window

DAYS = 4
EVENTS = events_model(DAYS, 200)
# With var `fail`, the batch of 2024-01-03 raises while the others succeed.
BATCHED = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          batch_size='day', begin='2024-01-01') }}
select case when {{ var('fail', false) }} and day(event_ts) = 3 then cast(raise_error('boom') as bigint)
            else id end as id,
       event_ts
from {{ ref('events') }}
"""
WINDOW = window(DAYS)


class TestMicrobatchAtomicPublish(AtomicPublishProject):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"events.sql": EVENTS, "batched.sql": BATCHED}

    def _state(self, project, root: str) -> tuple[int, list[int]]:
        """(version, ids) as a namespace reader and a plain Lance reader both see the table."""
        info = DirectoryNamespace(root).describe_table([project.test_schema, "batched"])
        plain = lance.dataset(info.location)
        assert plain.version == info.version
        return info.version, sorted(plain.to_table(columns=["id"]).column("id").to_pylist())

    def _files(self, project, root: str) -> set[str]:
        """Every file under the table's directory, relative to it."""
        location = DirectoryNamespace(root).describe_table([project.test_schema, "batched"]).location
        return {
            os.path.relpath(os.path.join(folder, name), location)
            for folder, _, names in os.walk(location)
            for name in names
        }

    def _batches(self, results) -> tuple[int, int]:
        (result,) = [r for r in results if r.node.name == "batched"]
        return len(result.batch_results.successful), len(result.batch_results.failed)

    def test_batches_are_staged_in_turn_and_published_together(self, project, dbt_profile_target) -> None:
        root = dbt_profile_target["root"]
        run_dbt(["run", "--select", "events"])

        # A new table: the first batch is staged to a scratch copy, the others on top of it.
        results = run_dbt(["run", "--select", "batched", *WINDOW])
        assert self._batches(results) == (DAYS, 0)
        first_version, ids = self._state(project, root)
        assert ids == list(range(1, 201))
        assert first_version == DAYS  # one version per batch, all published by the run
        scratch = os.path.join(root, ".lancens-staging")
        assert not os.path.exists(scratch)  # the run's scratch copy is gone, and the empty scratch root

        # An existing table: each batch replaces its day through detached versions of the table.
        results = run_dbt(["run", "--select", "batched", *WINDOW])
        assert self._batches(results) == (DAYS, 0)
        assert self._state(project, root) == (first_version + DAYS, list(range(1, 201)))
        files = self._files(project, root)
        assert not [name for name in files if os.path.basename(name).startswith("d")
                    and name.startswith("_versions")]  # fmt: skip  # no detached manifest left
        location = DirectoryNamespace(root).describe_table([project.test_schema, "batched"]).location
        assert_no_orphan_transactions(location)  # nor a detached version's transaction

        # A failed batch: the run publishes none of its batches and leaves no file behind.
        failing = ["run", "--select", "batched", *WINDOW, "--vars", "{fail: true}"]
        results = run_dbt(failing, expect_pass=False)
        assert self._batches(results) == (DAYS - 1, 1)
        assert self._state(project, root) == (first_version + DAYS, list(range(1, 201)))
        assert self._files(project, root) == files
