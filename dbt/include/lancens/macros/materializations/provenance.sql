{#-- Who made a version: recorded with every Lance commit dbt-lancens makes. --#}
{% macro lancens_provenance() %}
  {{ return({
      'dbt_invocation_id': invocation_id,
      'dbt_model': model.unique_id,
      'dbt_run_started_at': run_started_at.isoformat(),
  }) }}
{% endmacro %}
