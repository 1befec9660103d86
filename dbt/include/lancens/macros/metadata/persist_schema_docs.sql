{#-- A schema's description (no dbt resource carries one), e.g. from an on-run-end hook:
     `{{ lancens_persist_schema_docs(target.schema ~ '.marts', 'Curated marts') }}`. --#}
{% macro lancens_persist_schema_docs(schema, description) -%}
  {%- do adapter.persist_schema_docs(schema, description) -%}
{%- endmacro %}
