{#-- Atomic publish (profile `atomic_publish: true` or var `lancens_atomic_publish: true`). A project
     that wants it adds both hooks to its dbt_project.yml (README "Versions, registration, time travel"):
       on-run-start: ["{{ lancens_begin_atomic_publish() }}"]
       on-run-end: ["{{ lancens_end_atomic_publish(results) }}"]
     Writes of the run are staged; at the end they are published together if no node failed. --#}
{% macro lancens_begin_atomic_publish() %}
  {%- do adapter.begin_atomic_publish(var('lancens_atomic_publish', false), invocation_id) -%}
  {{ return('') }}
{% endmacro %}

{#-- Returns the hook's SQL: empty, or (another run published first) a statement that fails saying
     nothing of this run was published: dbt reports an on-run-end hook's failure only from its SQL. --#}
{% macro lancens_end_atomic_publish(results) %}
  {%- set outcome = adapter.end_atomic_publish(results) -%}
  {%- if outcome.published -%}
    {{ log("lancens: published " ~ outcome.published | length ~ " table version(s) together", info=true) }}
  {%- endif -%}
  {{ return(outcome.sql) }}
{% endmacro %}
