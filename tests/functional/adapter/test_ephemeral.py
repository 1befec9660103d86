"""dbt-tests-adapter's ephemeral suite.

The suite compares `target/run/` with Postgres' `create view ... as (...)`; dbt-lancens writes the
statement it runs, `create or replace view <schema>.<name> as <sql>`, with the same CTEs.
"""

from __future__ import annotations

import os
import re

from dbt.tests.adapter.ephemeral.test_ephemeral import (
    BaseEphemeralErrorHandling,
    BaseEphemeralMulti,
    BaseEphemeralNested,
)
from dbt.tests.util import check_relations_equal, run_dbt


def run_file(name: str) -> str:
    """`target/run/` of a model, without digits (the schema name has some) and whitespace."""
    path = f"./target/run/test/models/{name}.sql"
    assert os.path.exists(path)
    with open(path) as handle:
        return "".join(re.sub(r"\d+", "", handle.read()).split())


class TestEphemeralMulti(BaseEphemeralMulti):
    """Its `double_dependent` reads the seed twice with different filters (the shared-reader
    wrong-results case, docs/spark-datasource.md): the union must hold every seed row once."""

    def test_ephemeral_multi(self, project) -> None:
        run_dbt(["seed"])
        results = run_dbt(["run"])
        assert len(results) == 3
        check_relations_equal(project.adapter, ["seed", "dependent"])
        check_relations_equal(project.adapter, ["seed", "double_dependent"])
        check_relations_equal(project.adapter, ["seed", "super_dependent"])
        expected = (
            "create or replace view test_test_ephemeral.double_dependent as "
            "with __dbt__cte__base as (select * from test_test_ephemeral.seed), "
            " __dbt__cte__base_copy as (select * from __dbt__cte__base)"
            "-- base_copy just pulls from base. Make sure the listed"
            "-- graph of CTEs all share the same dbt_cte__base cte"
            "select * from __dbt__cte__base where gender = 'Male'"
            "union all"
            "select * from __dbt__cte__base_copy where gender = 'Female'"
        )
        assert run_file("double_dependent") == "".join(expected.split())


class TestEphemeralNested(BaseEphemeralNested):
    def test_ephemeral_nested(self, project) -> None:
        results = run_dbt(["run"])
        assert len(results) == 2
        expected = (
            "create or replace view test_test_ephemeral.root_view as "
            "with __dbt__cte__ephemeral_level_two as (select * from test_test_ephemeral.source_table), "
            " __dbt__cte__ephemeral as (select * from __dbt__cte__ephemeral_level_two)"
            "select * from __dbt__cte__ephemeral"
        )
        assert run_file("root_view") == "".join(expected.split())


class TestEphemeralErrorHandling(BaseEphemeralErrorHandling):
    pass
