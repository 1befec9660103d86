"""A Python model: runs in-process on dbt's SparkSession and returns a Spark DataFrame."""

from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    customers = dbt.ref("customers")
    return customers.select(
        "customer_id",
        "lifetime_value",
        F.when(F.col("lifetime_value") >= 40, "high")
        .when(F.col("lifetime_value") > 0, "regular")
        .otherwise("none")
        .alias("segment"),
    )
