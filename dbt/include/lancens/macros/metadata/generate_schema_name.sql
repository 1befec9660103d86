{#-- A custom schema nests under the target schema: target `analytics` with `+schema: marts`
     builds in the namespace `analytics.marts` (["analytics", "marts"]).
     Stored test failures keep dbt's own naming, `<target schema>_<custom>`: dbt's default audit
     schema is `analytics_dbt_test__audit` (["analytics_dbt_test__audit"]), where dbt's docs and
     its "See test failures" hint send the user. --#}
{% macro lancens__generate_schema_name(custom_schema_name, node) -%}
  {%- if custom_schema_name is none -%}
    {{ target.schema }}
  {%- elif node is not none and node.resource_type == 'test' -%}
    {{ target.schema }}_{{ custom_schema_name | trim }}
  {%- else -%}
    {{ target.schema }}.{{ custom_schema_name | trim }}
  {%- endif -%}
{%- endmacro %}
