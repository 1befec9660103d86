"""Write and read a Lance table on ``local-cluster``: executors are separate JVMs with their own
Python workers, so nothing can pass through the driver's memory. Prints one JSON line of facts.

Run by tests/unit/spark/test_cluster.py in a subprocess (one JVM hosts one SparkContext); Spark's own
files and console output go to the directory given as the second argument.
"""

from __future__ import annotations

import json
import os
import sys

from dbt.adapters.lancens.spark import get_or_create_session


def main(uri: str, files_dir: str) -> None:
    spark = get_or_create_session(
        master="local-cluster[2,1,1024]", config={"spark.executor.cores": "1"}, files_dir=files_dir
    )
    frame = spark.range(0, 4000, 1, 4).selectExpr("id", "array(CAST(id AS FLOAT), 1.0F) AS v")
    frame.write.format("lance").mode("overwrite").option("fixed_size_list.v", "2").save(uri)
    frame.write.format("lance").mode("append").save(uri)
    back = spark.read.format("lance").option("rows_per_partition", "1000").load(uri)
    pids = back.rdd.mapPartitions(lambda _: [os.getpid()]).distinct().collect()
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    facts = {
        "count": back.count(),
        "sum": back.where("id >= 100").groupBy().sum("id").first()[0],
        "worker_pids": sorted(set(pids)),
        "driver_pid": os.getpid(),
        "executors": executors,
    }
    spark.stop()
    print(json.dumps(facts))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
