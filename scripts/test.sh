#!/usr/bin/env bash
# Install dbt-lancens with its test dependencies, run the whole test suite, then the static checks
# (ruff lint and format, mypy). CI runs this after the sample (.ci/run).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
install_lancens test
cd "$PROJECT_ROOT"
# The dbt processes the tests start map one driver class archive made first (faster JVM starts);
# a plain `pytest` leaves it off (tests/conftest.py), so no test's process ever starts a dump.
if "$VENV_BIN/python" scripts/class_archive.py; then
  export DBT_LANCENS_CLASS_ARCHIVE=on
fi
set +e
# Two workers (one JVM each) overlap Spark start-up and the dbt subprocesses' waits; a test class
# stays on one worker so dbt-tests-adapter's class-scoped project is built once. The scopes go out
# in the order tests/conftest.py gives them (the long ones first), not xdist's by number of tests.
"$VENV_BIN/python" -m pytest -n 2 --dist loadscope --no-loadscope-reorder --durations=30 "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: the suite is missing, which is a failure" >&2
  exit 1
fi
checks=0
"$VENV_BIN/ruff" check . || checks=1
"$VENV_BIN/ruff" format --check . || checks=1
"$VENV_BIN/mypy" || checks=1
if [ "$status" -eq 0 ] && [ "$checks" -ne 0 ]; then
  echo "tests passed, but ruff or mypy did not" >&2
  exit 1
fi
exit "$status"
