"""Start a session with a class-archive directory, run one query and print one JSON line of facts:
the driver JVM's class-data-sharing options, whether it maps a file of that directory, and, when it
records its classes, what the launch left for the dumper. Run by tests/unit/spark/test_class_archive.py
in a subprocess: the archive only matters when a JVM is launched.

With ``--skip-dump`` the script marks the archive failed before it exits, so the dumper that waits
for this JVM finds the mark and makes no archive (the test checks the recording, not a 40 s dump)."""

from __future__ import annotations

import glob
import json
import os
import sys
import time

from dbt.adapters.lancens.spark import class_archive, jvm_connector
from dbt.adapters.lancens.spark.session import get_or_create_session


def main(directory: str, skip_dump: bool) -> None:
    user_options = {"spark.driver.extraJavaOptions": "-Ddbt.lancens.test=kept"}
    # the class path the test process's driver has (its `spark` fixture, and every dbt run on the
    # default `auto` path, put the JVM connector's jars first): an archive maps only under the class
    # path it was dumped with
    try:
        user_options.update(jvm_connector.spark_settings())
    except jvm_connector.ConnectorUnavailable:
        pass
    spark = get_or_create_session(master="local[1]", config=user_options, class_archive_dir=directory)
    jvm = spark._jvm
    arguments = [
        str(a) for a in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    ]
    pid = spark.sparkContext._gateway.proc.pid
    with open(f"/proc/{pid}/maps") as maps:
        mapped = sorted({line.split()[-1] for line in maps if directory in line})
    lists = glob.glob(os.path.join(directory, "*.classlist"))
    facts = {
        "answer": spark.sql("select 1 as one").collect()[0].one,
        "cds_options": [a for a in arguments if "Shared" in a or "DumpLoadedClassList" in a],
        "user_option_kept": "-Ddbt.lancens.test=kept" in arguments,
        "mapped": mapped,
        "class_lists": lists,
        "spark_home": str(jvm.java.lang.System.getenv("SPARK_HOME")),
    }
    if lists:
        # The dumper takes the archive's lock as it starts; until this JVM exits, no other launch records.
        deadline = time.monotonic() + 30
        while (
            class_archive.plan_launch(directory, facts["spark_home"], "") is not None
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)
        facts["other_launch_while_running"] = repr(
            class_archive.plan_launch(directory, facts["spark_home"], "")
        )
        facts["recorded_spark"] = class_archive._spark_started(lists[0])
        if skip_dump:
            (archive,) = glob.glob(os.path.join(directory, "*.jsa.lock"))
            with open(archive.removesuffix(".lock") + ".failed", "w") as failed:
                failed.write("skipped by the test\n")
    print(json.dumps(facts))


if __name__ == "__main__":
    main(sys.argv[1], "--skip-dump" in sys.argv[2:])
