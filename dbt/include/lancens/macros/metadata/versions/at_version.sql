{#-- Time travel in model SQL: `select * from {{ at_version(ref('orders'), 3) }}`, or by tag:
     `{{ at_version(ref('orders'), 'release-1') }}`. Renders a temporary Spark view reading that
     version with the `lance` data source's `version` option; use it in table (not view) models.
     While dbt parses, it renders the relation itself. --#}
{% macro at_version(relation, version) %}
  {%- if execute -%}
    {{- return(adapter.table_at_version(relation, version)) -}}
  {%- else -%}
    {{- return(relation) -}}
  {%- endif -%}
{% endmacro %}
