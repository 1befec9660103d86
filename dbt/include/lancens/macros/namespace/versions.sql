{#-- Table history: every dbt build is a Lance version that records who made it. --#}

{#-- Print version, time, rows and who made each version of `relation`; returns the rows (dicts). --#}
{% macro list_table_versions(relation) %}
  {%- set rows = adapter.lancens_list_table_versions(relation) -%}
  {%- do print(adapter.lancens_format_versions(relation, rows)) -%}
  {{ return(rows) }}
{% endmacro %}

{#-- Commit a new version whose content equals `version` (nothing is deleted). Returns the new version. --#}
{% macro restore_table(relation, version) %}
  {%- set new_version = adapter.lancens_restore_table(relation, version | int, lancens_operation_provenance('restore_table')) -%}
  {{ log("lancens: restored " ~ relation ~ " to version " ~ version ~ " as version " ~ new_version, info=true) }}
  {{ return(new_version) }}
{% endmacro %}

{#-- Who made a version when no model is being built (run-operation, hooks). --#}
{% macro lancens_operation_provenance(action) %}
  {%- set node = model.unique_id if (model is defined and model is mapping and model.get('unique_id')) else 'operation.' ~ action -%}
  {{ return({
      'dbt_invocation_id': invocation_id,
      'dbt_model': node,
      'dbt_run_started_at': run_started_at.isoformat(),
  }) }}
{% endmacro %}
