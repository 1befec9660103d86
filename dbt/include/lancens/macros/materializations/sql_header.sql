{#-- A model's `sql_header` (`set_sql_header`) runs in the model's Spark session before anything
     reads the model's query: its contract check, its build, a snapshot's staging query. Settings it
     makes stay in the session for later statements, as a header's do on every dbt adapter. The
     contract check therefore leaves the header out (`lancens__get_empty_subquery_sql`), so it runs
     once per model. --#}
{% macro lancens_run_sql_header() %}
  {%- set sql_header = lancens_sql_header_text() -%}
  {%- if sql_header -%}
    {%- call statement('sql_header') -%}{{ sql_header }}{%- endcall -%}
  {%- endif -%}
{% endmacro %}

{#-- The header as target/run/ shows it above the model's statement. --#}
{% macro lancens_sql_header_text() %}
  {%- set sql_header = config.get('sql_header', none) -%}
  {{- return(sql_header | trim ~ '\n' if sql_header is not none and sql_header | trim else '') -}}
{% endmacro %}

{% macro lancens__get_empty_subquery_sql(select_sql, select_sql_header=none) -%}
  select * from (
    {{ select_sql }}
  ) as __dbt_sbq
  where false
  limit 0
{%- endmacro %}
