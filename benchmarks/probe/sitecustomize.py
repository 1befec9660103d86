"""Loads the benchmark timing probe (``lancens_probe``) when ``LANCENS_PROBE_DIR`` is set.

Python imports ``sitecustomize`` at start-up from ``PYTHONPATH``; putting ``benchmarks/probe`` there
(as ``benchmarks/model_profile.py`` does) makes the dbt process and every Spark Python worker record.
"""

import os

if os.environ.get("LANCENS_PROBE_DIR"):
    import lancens_probe

    lancens_probe.install()
