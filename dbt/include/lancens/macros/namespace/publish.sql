{#-- Atomic publish (profile `atomic_publish: true` or var `lancens_atomic_publish: true`): the
     adapter's own on-run-start / on-run-end hooks (dbt_project.yml of this package). Writes of the
     run are staged; at the end they are published together if no node failed, else discarded. --#}
{% macro lancens_begin_atomic_publish() %}
  {%- do adapter.lancens_begin_run(var('lancens_atomic_publish', false), invocation_id) -%}
  {{ return('') }}
{% endmacro %}

{% macro lancens_end_atomic_publish(results) %}
  {%- set statuses = [] -%}
  {%- for result in results -%}
    {%- do statuses.append(result.status) -%}
  {%- endfor -%}
  {%- set published = adapter.lancens_end_run(statuses) -%}
  {%- if published -%}
    {{ log("lancens: published " ~ published | length ~ " table version(s) together", info=true) }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}
