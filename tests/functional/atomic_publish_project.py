"""A dbt project set up for atomic publish: its own root, `atomic_publish: true` and the run hooks."""

from __future__ import annotations

import pytest


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
