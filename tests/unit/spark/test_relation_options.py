"""One query reading one table with two `WITH (...)` option sets is refused, not answered wrongly.

Spark resolves every reference to a table in a query to one relation and ignores the references'
own options there, so `t WITH ('version' = '1') UNION ALL t` read version 1 twice.
"""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.runtime.spark_backends import LocalSpark
from dbt.adapters.lancens.spark.datasource import register_bound_source
from dbt.adapters.lancens.spark.relation_options import DifferingOptionsError, refuse_differing_options

V1 = "ro.t WITH ('version' = '1')"
REFUSED = [
    f"SELECT id FROM {V1} UNION ALL SELECT id FROM ro.t",
    f"SELECT id FROM ro.t UNION ALL SELECT id FROM {V1}",
    f"SELECT count(*) FROM ro.t n LEFT ANTI JOIN {V1} o ON n.id = o.id",
    f"SELECT id FROM ro.t WHERE id IN (SELECT id FROM {V1})",
    f"WITH old AS (SELECT id FROM {V1}) SELECT * FROM old JOIN ro.t USING (id)",
    "SELECT id FROM ro.t WITH ('version' = '1') UNION ALL SELECT id FROM ro.t WITH ('version' = '2')",
    f"SELECT id FROM {V1} UNION ALL SELECT id FROM spark_catalog.ro.t",  # the same table, 3 parts
    f"SELECT id FROM {V1} UNION ALL SELECT id FROM ro.v",  # a view over it
    f"SELECT id FROM ro.vv UNION ALL SELECT id FROM {V1}",  # a view over that view
]
# (query, the answer Spark gives it: these read one option set per table)
ANSWERED = [
    (f"SELECT count(*) FROM {V1}", 3),
    (f"SELECT count(*) FROM (SELECT id FROM {V1} UNION ALL SELECT id FROM ro.t with ('VERSION'='1'))", 6),
    ("WITH x AS (SELECT id FROM ro.t) SELECT count(*) FROM x a JOIN x b USING (id)", 10),
    ("SELECT count(*) FROM ro.t", 10),
    ("SELECT count(*) FROM (SELECT id FROM ro.vv UNION ALL SELECT id FROM spark_catalog.ro.t)", 20),
]


@pytest.fixture(scope="module")
def versioned_table(spark, tmp_path_factory: pytest.TempPathFactory) -> None:
    uri = str(tmp_path_factory.mktemp("relation_options") / "t.lance")
    spark.range(0, 3).write.format("lance").mode("overwrite").save(uri)  # version 1: ids 0..2
    spark.range(3, 10).write.format("lance").mode("append").save(uri)  # version 2: ids 0..9
    spark.sql("CREATE DATABASE IF NOT EXISTS ro")
    spark.sql("DROP TABLE IF EXISTS ro.t")
    spark.sql(f"CREATE TABLE ro.t USING {register_bound_source(spark, {'path': uri})}")
    spark.sql("CREATE OR REPLACE VIEW ro.v AS SELECT id FROM ro.t")
    spark.sql("CREATE OR REPLACE VIEW ro.vv AS SELECT id FROM ro.v")


@pytest.mark.parametrize("query", REFUSED)
def test_two_option_sets_for_one_table_are_refused(spark, versioned_table: None, query: str) -> None:
    with pytest.raises(DifferingOptionsError, match=r"reads ro\.t with two different option sets"):
        refuse_differing_options(spark, query)


@pytest.mark.parametrize(("query", "count"), ANSWERED)
def test_one_option_set_per_table_is_answered(spark, versioned_table: None, query: str, count: int) -> None:
    refuse_differing_options(spark, query)
    assert spark.sql(query).collect()[0][0] == count


def test_a_one_part_name_is_the_current_databases_table_unless_a_cte(spark, versioned_table: None) -> None:
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase("ro")
    try:
        with pytest.raises(DifferingOptionsError):
            refuse_differing_options(spark, f"SELECT id FROM t UNION ALL SELECT id FROM {V1}")
        spark.sql("CREATE DATABASE IF NOT EXISTS ro_views")
        spark.sql("CREATE OR REPLACE VIEW ro_views.unqualified AS SELECT id FROM t")  # `t` is ro.t
        spark.catalog.setCurrentDatabase(previous)
        with pytest.raises(DifferingOptionsError):  # a view's one-part names: its creation's database
            refuse_differing_options(
                spark, f"SELECT id FROM {V1} UNION ALL SELECT id FROM ro_views.unqualified"
            )
        spark.catalog.setCurrentDatabase("ro")
        cte = f"WITH t AS (SELECT 42 AS id) SELECT id FROM t UNION ALL SELECT id FROM {V1}"
        refuse_differing_options(spark, cte)
        assert sorted(row.id for row in spark.sql(cte).collect()) == [0, 1, 2, 42]
    finally:
        spark.catalog.setCurrentDatabase(previous)


@pytest.mark.parametrize("pushdown", [False, True])
def test_every_statement_the_adapter_runs_is_checked(spark, versioned_table: None, pushdown: bool) -> None:
    """The in-process backend's one entry for SQL (`runtime.sql` calls it) refuses such a query."""
    backend = LocalSpark(master="local[2]", config={})
    with pytest.raises(DifferingOptionsError):
        backend.analyse(spark, REFUSED[0], pushdown)
    assert backend.analyse(spark, ANSWERED[0][0], pushdown).collect()[0][0] == 3
