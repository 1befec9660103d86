"""`on_drop`: what happens to a table model's files when the model becomes a view (the one time a
dbt run drops a model's table). `purge` (the default) deletes them; `deregister` keeps them."""

from __future__ import annotations

import os

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

MODEL = """
{{ config(materialized=var('kind', 'table'), on_drop=var('on_drop', 'purge')) }}
select id from range(4)
"""


class TestOnDrop:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"kept.sql": MODEL, "purged.sql": MODEL}

    def test_a_table_turned_view_keeps_or_deletes_its_files(self, project, lancens_root: str) -> None:
        ns = DirectoryNamespace(lancens_root)
        kept, purged = [project.test_schema, "kept"], [project.test_schema, "purged"]
        run_dbt(["run"])
        kept_at, purged_at = ns.describe_table(kept).location, ns.describe_table(purged).location

        run_dbt(["run", "--select", "kept", "--vars", "{kind: view, on_drop: deregister}"])
        run_dbt(["run", "--select", "purged", "--vars", "{kind: view}"])

        for view in (kept, purged):
            assert not ns.table_exists(view) and ns.describe_view(view).sql
        assert lance.dataset(kept_at).count_rows() == 4  # deregistered: the files stay readable
        assert not os.path.exists(purged_at)

        # a value that is neither fails the run naming it, and the table stays
        run_dbt(["run", "--select", "kept"])
        _, output = run_dbt_and_capture(
            ["run", "--select", "kept", "--vars", "{kind: view, on_drop: keep}"], expect_pass=False
        )
        assert "on_drop must be one of" in output
        assert ns.table_exists(kept)
