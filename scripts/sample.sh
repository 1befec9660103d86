#!/usr/bin/env bash
# Install dbt-lancens and build the sample project (seeds, models, Python model, tests) end to end.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$VENV_BIN/python" -m pip install --quiet -e "$PROJECT_ROOT"
cd "$PROJECT_ROOT/sample_project"
"$VENV_BIN/dbt" build --profiles-dir . --project-dir . "$@"
