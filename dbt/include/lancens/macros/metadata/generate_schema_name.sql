{#-- A custom schema nests under the target schema: target `analytics` with `+schema: marts`
     builds in the namespace `analytics.marts` (["analytics", "marts"]). --#}
{% macro lancens__generate_schema_name(custom_schema_name, node) -%}
  {%- if custom_schema_name is none -%}
    {{ target.schema }}
  {%- else -%}
    {{ target.schema }}.{{ custom_schema_name | trim }}
  {%- endif -%}
{%- endmacro %}
