"""Read a Lance table from a user's own SparkSession: plain builder settings, then only the
registration function. Prints one JSON line of facts. Run by tests/unit/spark/test_plain_session.py
in a subprocess (a fresh JVM, so no setting of dbt-lancens's session can leak in)."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark import register_data_source


def main(uri: str) -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    before = spark.conf.get("spark.sql.python.filterPushdown.enabled")
    register_data_source(spark)
    frame = spark.read.format("lance").load(uri)
    facts = {
        "pushdown_conf_before": before,
        "filtered": frame.where("id > 14").count(),
        "all": frame.count(),
        "union": frame.where("id > 14").union(frame).count(),
    }
    spark.stop()
    print(json.dumps(facts))


if __name__ == "__main__":
    main(sys.argv[1])
