"""A dbt project set up for atomic publish: its own root, `atomic_publish: true` and the run hooks."""

from __future__ import annotations

import os

import lance
import pytest


def assert_no_orphan_transactions(location: str) -> None:
    """Every transaction file of the table at `location` is some version's: staging (detached
    readable copies, the staged versions of a run that published nothing) leaves none behind."""
    dataset = lance.dataset(location)
    referenced = set()
    for entry in dataset.versions():
        transaction = dataset.read_transaction(entry["version"])
        referenced.add(f"{transaction.read_version}-{transaction.uuid}.txn")
    assert set(os.listdir(os.path.join(location, "_transactions"))) == referenced, location


class AtomicPublishProject:
    """Mixin for test classes on dbt-tests-adapter's `project` fixture (one thread, as the held runs need)."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("atomic_root"))
        return {"type": "lancens", "root": root, "master": "local[2]", "threads": 1, "atomic_publish": True}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {
            "on-run-start": ["{{ lancens_begin_atomic_publish() }}"],
            "on-run-end": ["{{ lancens_end_atomic_publish(results) }}"],
        }
