{#-- Who made a version when no model is being built (run-operation, hooks). --#}
{% macro lancens_operation_provenance(action) %}
  {%- set node = model.unique_id if (model is defined and model is mapping and model.get('unique_id')) else 'operation.' ~ action -%}
  {{ return({
      'dbt_invocation_id': invocation_id,
      'dbt_model': node,
      'dbt_run_started_at': run_started_at.isoformat(),
  }) }}
{% endmacro %}
