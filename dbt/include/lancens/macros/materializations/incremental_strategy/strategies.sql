{#-- dbt's strategy macros for Lance. Each applies the model's result through the adapter (one Lance
     commit, see dbt/adapters/lancens/materializations/incremental.py) and returns an empty statement. --#}
{% macro lancens__get_incremental_default_sql(arg_dict) -%}
  {%- set strategy = 'merge' if lancens_key_columns(arg_dict['unique_key']) else 'append' -%}
  {{- lancens_apply_incremental(strategy, arg_dict) -}}
{%- endmacro %}

{% macro lancens__get_incremental_append_sql(arg_dict) -%}
  {{- lancens_apply_incremental('append', arg_dict) -}}
{%- endmacro %}

{% macro lancens__get_incremental_merge_sql(arg_dict) -%}
  {{- lancens_apply_incremental('merge', arg_dict) -}}
{%- endmacro %}

{% macro lancens__get_incremental_delete_insert_sql(arg_dict) -%}
  {{- lancens_apply_incremental('delete+insert', arg_dict) -}}
{%- endmacro %}

{% macro lancens__get_incremental_insert_overwrite_sql(arg_dict) -%}
  {{- lancens_apply_incremental('insert_overwrite', arg_dict) -}}
{%- endmacro %}

{% macro lancens__get_incremental_microbatch_sql(arg_dict) -%}
  {{- lancens_apply_incremental('microbatch', arg_dict) -}}
{%- endmacro %}
