# Sourced by the scripts: one virtualenv for the project, and loopback-only networking for Spark.
set -euo pipefail
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x "$PROJECT_ROOT/.venv/bin/python" ]; then
  "$PYTHON" -m venv "$PROJECT_ROOT/.venv"
  "$PROJECT_ROOT/.venv/bin/python" -m pip install --quiet --upgrade pip
fi
VENV_BIN="$PROJECT_ROOT/.venv/bin"
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$VENV_BIN/python"
export PYSPARK_DRIVER_PYTHON="$VENV_BIN/python"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
export DO_NOT_TRACK=1
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "Java 17 is required by PySpark 4: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)" >&2
  exit 1
fi
