#!/usr/bin/env bash
# Install dbt-lancens with the extra the sample needs (its `documents` model computes embeddings) and
# build the sample project (seeds, models, Python model, snapshot, tests) end to end.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
install_lancens embeddings
cd "$PROJECT_ROOT/sample_project"
"$VENV_BIN/dbt" build --profiles-dir . --project-dir . "$@"
