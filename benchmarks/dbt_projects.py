"""The dbt projects the benchmarks build, for dbt-lancens and for dbt-spark (session method, Parquet).

Each shape is a whole project written from this file (models, sources, ``dbt_project.yml``,
``profiles.yml``), plus the raw tables its models read, so a benchmark runs from a clean clone:

- ``sample``: the models of ``sample_project/`` (its Python model as the same logic in SQL,
  because dbt-spark runs Python models only on Databricks) over generated raw orders, payments
  and customers in the place of its seeds.
- ``wide``: 8 models (2 views, 5 tables, 1 incremental) over a 1,000,000-row event table: joins,
  aggregates, windows.
- ``many``: 40 chained table models of 10,000 rows each: what one model costs beyond its data.

Both adapters get the same SQL. dbt-spark allows ``merge`` only on Delta/Iceberg/Hudi, so its
incremental models use ``append``; on an empty warehouse both build them as tables.
Raw tables are written directly, not through dbt: Lance tables through the namespace engine for
dbt-lancens, Parquet files registered in the Hive metastore (Derby, in the project directory) for
dbt-spark.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from harness import REPOSITORY

SAMPLE = REPOSITORY / "sample_project"
ADAPTERS = ("lancens", "spark")
PROFILE_NAME = "bench"


def profile_yml(
    adapter: str, master: str, spark_config: dict[str, str] | None = None, threads: int = 2
) -> str:
    """profiles.yml: the same master, threads and loopback-only Spark for both adapters."""
    extra = dict(spark_config or {})
    if adapter == "lancens":
        lines = [
            "type: lancens",
            "root: ./warehouse",
            "schema: analytics",
            f'master: "{master}"',
            f"threads: {threads}",
        ]
        if extra:
            lines.append("spark_config:")
            lines += [f'  {key}: "{value}"' for key, value in extra.items()]
    else:
        settings = {
            "spark.master": master,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.session.timeZone": "UTC",
            **extra,
        }
        lines = [
            "type: spark",
            "method: session",
            "host: localhost",
            "schema: analytics",
            f"threads: {threads}",
            "server_side_parameters:",
        ]
        lines += [f'  {key}: "{value}"' for key, value in settings.items()]
    body = "".join(f"      {line}\n" for line in lines)
    return f"{PROFILE_NAME}:\n  target: bench\n  outputs:\n    bench:\n{body}"


@dataclass(frozen=True)
class Shape:
    """A benchmark project: its models for an adapter, its raw tables and where they live."""

    name: str
    default_rows: int
    describe: str
    write_models: Callable[[str, Path], None]
    raw_tables: Callable[[int], dict[str, pa.Table]]
    raw_schema: Callable[[str], list[str]]


def write_project(shape: Shape, adapter: str, directory: Path, master: str, spark_config=None) -> None:
    """A complete dbt project for ``adapter`` in ``directory`` (created)."""
    directory.mkdir(parents=True)
    shape.write_models(adapter, directory)
    (directory / "profiles.yml").write_text(profile_yml(adapter, master, spark_config))


def _dbt_project(directory: Path, adapter: str, extra_models: str = "") -> None:
    settings = ("    +file_format: parquet\n" if adapter == "spark" else "") + extra_models
    models = f"models:\n  {PROFILE_NAME}:\n{settings}" if settings else ""
    (directory / "dbt_project.yml").write_text(
        f"name: {PROFILE_NAME}\nversion: '1.0'\nconfig-version: 2\nprofile: {PROFILE_NAME}\n"
        f"model-paths: ['models']\n{models}"
    )


def _incremental(adapter: str, unique_key: str) -> str:
    strategy = "merge" if adapter == "lancens" else "append"
    return (
        f"{{{{ config(materialized='incremental', unique_key='{unique_key}', "
        f"incremental_strategy='{strategy}') }}}}\n"
    )


def _sources(directory: Path, tables: list[str]) -> None:
    listed = "".join(f"      - name: {name}\n" for name in tables)
    (directory / "models" / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n{listed}"
    )


# --- sample: the sample project's models ----------------------------------------------------------

SEGMENTS_SQL = """\
{{ config(materialized='table') }}

select
    customer_id,
    lifetime_value,
    case when lifetime_value >= 40 then 'high'
         when lifetime_value > 0 then 'regular'
         else 'none' end as segment
from {{ ref('customers') }}
"""
STATUSES = ["placed", "shipped", "completed", "return_pending", "returned"]
METHODS = ["credit_card", "coupon", "bank_transfer", "gift_card"]


def _sample_models(adapter: str, directory: Path) -> None:
    """The sample project's models and seeds (for ``ref``); its Python model as SQL."""
    for part in ("models", "seeds"):
        shutil.copytree(SAMPLE / part, directory / part)
    (directory / "models" / "marts" / "customer_segments.py").unlink()
    (directory / "models" / "marts" / "customer_segments.sql").write_text(SEGMENTS_SQL)
    project = (
        (SAMPLE / "dbt_project.yml").read_text().replace("profile: jaffle_lance", f"profile: {PROFILE_NAME}")
    )
    if adapter == "spark":  # dbt-spark's default would be a Hive text table
        project = project.replace(
            "models:\n  jaffle_lance:\n", "models:\n  jaffle_lance:\n    +file_format: parquet\n"
        )
        for model in (directory / "models").rglob("*.sql"):
            sql = model.read_text()
            model.write_text(sql.replace("incremental_strategy='merge'", "incremental_strategy='append'"))
    (directory / "dbt_project.yml").write_text(project)


def _sample_raw(rows: int) -> dict[str, pa.Table]:
    """``rows`` orders and payments, ``rows // 10`` customers (the sample's seed columns)."""
    customers = max(rows // 10, 1)
    cid = np.arange(1, customers + 1, dtype=np.int64)
    oid = np.arange(1, rows + 1, dtype=np.int64)
    index = np.arange(rows, dtype=np.int64)
    cid_text = pc.cast(pa.array(cid), pa.string())
    return {
        "raw_customers": pa.table(
            {
                "id": cid,
                "first_name": pc.binary_join_element_wise(
                    "first-", pc.cast(pa.array(cid & 1023), pa.string()), ""
                ),
                "last_name": pc.binary_join_element_wise("L", pc.cast(pa.array(cid & 31), pa.string()), ""),
                "email": pc.binary_join_element_wise("c", cid_text, "@example.com", ""),
                "note": pa.array([None if i % 3 else f"note {i}" for i in range(customers)], pa.string()),
            }
        ),
        "raw_orders": pa.table(
            {
                "id": oid,
                "user_id": (index * 7919) % customers + 1,
                "order_date": _dates(index % 730),
                "status": _pick(STATUSES, index),
            }
        ),
        "raw_payments": pa.table(
            {
                "id": oid,
                "order_id": oid,
                "payment_method": _pick(METHODS, index),
                "amount": (index * 37) % 5000,
            }
        ),
    }


def _dates(days: np.ndarray) -> pa.Array:
    epoch_day = (dt.date(2024, 1, 1) - dt.date(1970, 1, 1)).days
    return pa.array((days + epoch_day).astype(np.int32), pa.int32()).cast(pa.date32())


def _pick(values: list[str], index: np.ndarray) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(index % len(values), pa.int32()), values).cast(pa.string())


# --- wide: 8 models over 1,000,000 events ---------------------------------------------------------

KINDS = ["view", "click", "cart", "purchase", "refund"]
COUNTRIES = ["de", "fr", "us", "jp", "br", "in", "ng", "au"]
TIERS = ["free", "pro", "team"]
CATEGORIES = ["books", "games", "garden", "music", "tools", "toys", "food", "sport"]

WIDE_MODELS = {
    "stg_events": """{{ config(materialized='view') }}
select event_id, user_id, product_id, event_date, kind, quantity, amount,
       amount * quantity as revenue
from {{ source('raw', 'events') }}
where kind <> 'refund'
""",
    "stg_users": """{{ config(materialized='view') }}
select user_id, upper(country) as country, tier, signup_date
from {{ source('raw', 'users') }}
""",
    "events_enriched": """{{ config(materialized='table') }}
select e.event_id, e.user_id, e.product_id, e.event_date, e.kind, e.quantity, e.amount, e.revenue,
       u.country, u.tier, p.category, p.price,
       datediff(e.event_date, u.signup_date) as days_since_signup
from {{ ref('stg_events') }} e
join {{ ref('stg_users') }} u on e.user_id = u.user_id
join {{ source('raw', 'products') }} p on e.product_id = p.product_id
""",
    "daily_revenue": """{{ config(materialized='table') }}
select event_date, category, count(*) as events, sum(revenue) as revenue, avg(amount) as avg_amount,
       count(distinct user_id) as buyers
from {{ ref('events_enriched') }}
group by event_date, category
""",
    "user_stats": """{{ config(materialized='table') }}
select user_id, country, tier, count(*) as events, sum(revenue) as revenue,
       min(event_date) as first_event, max(event_date) as last_event
from {{ ref('events_enriched') }}
group by user_id, country, tier
""",
    "user_activity": """{{ config(materialized='table') }}
select event_id, user_id, event_date, revenue,
       sum(revenue) over (partition by user_id order by event_date, event_id
                          rows between unbounded preceding and current row) as running_revenue,
       row_number() over (partition by user_id order by event_date, event_id) as nth_event,
       lag(event_date) over (partition by user_id order by event_date, event_id) as previous_event
from {{ ref('events_enriched') }}
""",
    "product_rank": """{{ config(materialized='table') }}
with totals as (
    select product_id, category, sum(revenue) as revenue, sum(quantity) as units
    from {{ ref('events_enriched') }}
    group by product_id, category
)
select product_id, category, revenue, units,
       rank() over (partition by category order by revenue desc) as rank_in_category
from totals
""",
}
WIDE_INCREMENTAL_SQL = """
select event_id, user_id, event_date, category, revenue
from {{ ref('events_enriched') }}
where kind = 'purchase'
{% if is_incremental() %}and event_date >= (select max(event_date) from {{ this }}){% endif %}
"""


def _wide_models(adapter: str, directory: Path) -> None:
    models = directory / "models"
    models.mkdir()
    _dbt_project(directory, adapter)
    _sources(directory, ["events", "users", "products"])
    for name, sql in WIDE_MODELS.items():
        (models / f"{name}.sql").write_text(sql)
    (models / "purchases.sql").write_text(_incremental(adapter, "event_id") + WIDE_INCREMENTAL_SQL)


def _wide_raw(rows: int) -> dict[str, pa.Table]:
    users = max(rows // 100, 1)
    products = 1000
    index = np.arange(rows, dtype=np.int64)
    user_index = np.arange(users, dtype=np.int64)
    product_index = np.arange(products, dtype=np.int64)
    return {
        "events": pa.table(
            {
                "event_id": index + 1,
                "user_id": (index * 7919) % users + 1,
                "product_id": (index * 104729) % products + 1,
                "event_date": _dates(index % 365),
                "kind": _pick(KINDS, (index * 31) % 97),
                "quantity": pa.array(index % 5 + 1, pa.int32()),
                "amount": (index % 10_000) / 100.0,
            }
        ),
        "users": pa.table(
            {
                "user_id": user_index + 1,
                "country": _pick(COUNTRIES, user_index),
                "tier": _pick(TIERS, user_index // 7),
                "signup_date": _dates(user_index % 300),
            }
        ),
        "products": pa.table(
            {
                "product_id": product_index + 1,
                "category": _pick(CATEGORIES, product_index),
                "price": (product_index % 200) + 0.99,
            }
        ),
    }


# --- many: 40 chained small models ----------------------------------------------------------------

CHAIN = 40


def _many_models(adapter: str, directory: Path) -> None:
    models = directory / "models"
    models.mkdir()
    _dbt_project(directory, adapter, "    +materialized: table\n")
    _sources(directory, ["rows"])
    (models / "step_01.sql").write_text("select id, grp, val from {{ source('raw', 'rows') }}\n")
    for step in range(2, CHAIN + 1):
        (models / f"step_{step:02d}.sql").write_text(
            f"select id, grp, val + id % 7 as val from {{{{ ref('step_{step - 1:02d}') }}}}\n"
        )


def _many_raw(rows: int) -> dict[str, pa.Table]:
    index = np.arange(rows, dtype=np.int64)
    return {"rows": pa.table({"id": index, "grp": _pick(CATEGORIES, index), "val": index % 1000 * 1.5})}


def _raw_schema_sample(adapter: str) -> list[str]:
    return ["analytics", "raw"] if adapter == "lancens" else ["analytics_raw"]


def _raw_schema_source(adapter: str) -> list[str]:
    return ["raw"]


SHAPES = {
    "sample": Shape(
        "sample", 1_000_000, "sample_project models; --rows orders and payments", _sample_models,
        _sample_raw, _raw_schema_sample,
    ),
    "wide": Shape(
        "wide", 1_000_000, "8 models (2 views, 5 tables, 1 incremental) over --rows events", _wide_models,
        _wide_raw, _raw_schema_source,
    ),
    "many": Shape(
        "many", 10_000, f"{CHAIN} chained table models of --rows rows", _many_models, _many_raw,
        _raw_schema_source,
    ),
}  # fmt: skip


def write_raw(shape: Shape, adapter: str, project: Path, raw_dir: Path, rows: int, master: str) -> None:
    """Write the raw tables where ``adapter``'s ``ref``/``source`` resolve (run in ``project``).

    Parquet files go to ``raw_dir`` (outside the project, so the project can be restored from a
    pristine copy between repeats while the metastore's absolute locations stay valid).
    """
    tables = shape.raw_tables(rows)
    schema = shape.raw_schema(adapter)
    if adapter == "lancens":
        from dbt.adapters.lancens.namespace import DirectoryNamespace

        namespace = DirectoryNamespace(str(project / "warehouse"))
        for depth in range(1, len(schema) + 1):
            namespace.create_namespace(schema[:depth])
        for name, table in tables.items():
            namespace.create_table([*schema, name], table)
        return
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .enableHiveSupport()
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    (database,) = schema
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for name, table in tables.items():
        location = raw_dir / name
        location.mkdir(parents=True)
        pq.write_table(table, location / "part-0.parquet")
        spark.sql(f"CREATE TABLE {database}.{name} USING parquet LOCATION '{location}'")
    spark.stop()
