#!/usr/bin/env bash
# Install dbt-lancens with its test dependencies and run the whole test suite.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VENV_BIN/python" -m pip install --quiet -e "$PROJECT_ROOT[test]"
cd "$PROJECT_ROOT"
set +e
"$VENV_BIN/python" -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: the suite is missing, which is a failure" >&2
  exit 1
fi
exit "$status"
