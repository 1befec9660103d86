"""dbt models and tests that read one table twice with a filter on one read return the right rows.

PySpark 4.3 hands one planned reader to every scan of a relation (docs/spark-datasource.md): before
the fix, `select id from t where amount > 50 union all select id from t` filtered both halves, and
a relationships test with a `where` on the child side counted failures against a filtered parent.
Expected answers are computed here in Python from the seed's rows.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt


def _parent(i: int) -> int | None:
    """A row's parent: none for every fifth row, a missing one (id + 100) for every seventh."""
    if i % 5 == 0:
        return None
    return i + 100 if i % 7 == 0 else i - 1


ROWS = [(i, (i * 37) % 100, "abc"[i % 3], _parent(i)) for i in range(1, 21)]
SEED = "id,amount,category,parent_id\n" + "\n".join(
    f"{i},{amount},{category},{'' if parent is None else parent}" for i, amount, category, parent in ROWS
)
ABOVE_50 = [i for i, amount, _, _ in ROWS if amount > 50]

MODELS = {
    "union_model.sql": (
        "select id from {{ ref('events') }} where amount > 50 union all select id from {{ ref('events') }}"
    ),
    "self_join.sql": (
        "select a.id, b.id as other from {{ ref('events') }} a "
        "join {{ ref('events') }} b on a.category = b.category where a.amount > 80"
    ),
    "cte_twice.sql": (
        "with base as (select * from {{ ref('events') }}) "
        "select id from base where amount > 50 union all select id from base where category = 'b'"
    ),
    "single_filtered.sql": "select id, amount from {{ ref('events') }} where amount > 50",
}

SCHEMA_YML = """
version: 2
models:
  - name: single_filtered
    columns:
      - name: id
        data_tests:
          - relationships:
              arguments:
                to: ref('events')
                field: id
              config:
                where: "amount > 90"
seeds:
  - name: events
    columns:
      - name: parent_id
        data_tests:
          - relationships:
              arguments:
                to: ref('events')
                field: id
              config:
                where: "amount > 50"
"""


class TestSharedScansInDbt:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"events.csv": SEED}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {**MODELS, "schema.yml": SCHEMA_YML}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": {"+materialized": "table"}}

    def _ids(self, project, model: str, column: str = "id") -> list:
        rows = project.run_sql(f"select {column} from {project.test_schema}.{model}", fetch="all")
        return sorted(row[0] for row in rows)

    def test_models_and_tests(self, project) -> None:
        run_dbt(["seed"])
        run_dbt(["run"])
        assert self._ids(project, "union_model") == sorted(ABOVE_50 + [i for i, *_ in ROWS])
        pairs = project.run_sql(f"select id, other from {project.test_schema}.self_join", fetch="all")
        expected_pairs = sorted(
            (a, b) for a, amount, cat_a, _ in ROWS if amount > 80 for b, _, cat_b, _ in ROWS if cat_a == cat_b
        )
        assert sorted(tuple(row) for row in pairs) == expected_pairs
        in_b = [i for i, _, category, _ in ROWS if category == "b"]
        assert self._ids(project, "cte_twice") == sorted(ABOVE_50 + in_b)
        assert self._ids(project, "single_filtered") == ABOVE_50

        # Every parent_id of a row with amount > 50 must be an id of the whole table; the test's
        # `where` filters the child side only (a filtered parent side would miss most parents).
        results = run_dbt(["test"], expect_pass=False)
        by_name = {result.node.name: result for result in results}
        seed_test = next(r for name, r in by_name.items() if name.startswith("relationships_events"))
        expected_failures = [
            i
            for i, amount, _, parent in ROWS
            if amount > 50 and parent is not None and parent not in range(1, 21)
        ]
        assert expected_failures and seed_test.failures == len(expected_failures)
        model_test = next(r for name, r in by_name.items() if name.startswith("relationships_single"))
        assert model_test.status == "pass" and model_test.failures == 0
