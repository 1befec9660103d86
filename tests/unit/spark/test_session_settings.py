"""Session settings that depend on what can see the session: the plan description Spark renders for
every query is cheap (`simple`) only while nothing can show it."""

from __future__ import annotations

from pyspark.sql import SparkSession

from dbt.adapters.lancens.spark import session


def test_the_shared_session_renders_simple_plan_descriptions(spark: SparkSession) -> None:
    # the test session starts like a dbt run's: web UI off, no event log, no extra listeners
    assert spark.conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.ui.explainMode") == "simple"


def test_plan_descriptions_count_as_seen_when_anything_can_show_them() -> None:
    quiet = session.default_config()
    assert session._plan_descriptions_unseen(quiet)
    assert not session._plan_descriptions_unseen({**quiet, "spark.ui.enabled": "true"})
    assert not session._plan_descriptions_unseen({**quiet, "spark.ui.enabled": " TRUE "})
    assert not session._plan_descriptions_unseen({**quiet, "spark.eventLog.enabled": "true"})
    assert not session._plan_descriptions_unseen({**quiet, "spark.extraListeners": "com.example.Listener"})
    # Spark's own default turns the UI on: a config without the key is a session with a UI
    assert not session._plan_descriptions_unseen({})


def test_a_session_with_a_ui_keeps_sparks_plan_descriptions_and_an_explicit_mode_wins() -> None:
    assert session.session_settings(None, None, "/w")["spark.sql.ui.explainMode"] == "simple"
    with_ui = session.session_settings({"spark.ui.enabled": "true"}, None, "/w")
    assert "spark.sql.ui.explainMode" not in with_ui
    chosen = session.session_settings({"spark.sql.ui.explainMode": "formatted"}, None, "/w")
    assert chosen["spark.sql.ui.explainMode"] == "formatted"
