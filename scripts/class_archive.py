"""Make the driver JVM's class archive (dbt/adapters/lancens/spark/class_archive.py) and wait for it;
exit 0 when one is ready to map.

scripts/test.sh runs this before the suite and turns the archive on for the tests only when it is
ready: every ``dbt`` process the tests start then maps the finished archive (a JVM start about 4 s
faster here; tests/reliability/test_compile_errors.py took 48 s against 83 s, then 34 s against
47 s), and no test's process records classes or starts a dump beside the tests, which only a launch
that finds no archive does. Prints what was done.
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from harness import prepare_class_archive  # noqa: E402 - the benchmarks' harness, not a package

from dbt.adapters.lancens.spark import class_archive  # noqa: E402

print(prepare_class_archive(), flush=True)
directory = class_archive.default_directory()
sys.exit(0 if directory and glob.glob(os.path.join(directory, "*.jsa")) else 1)
