{#-- After a table, incremental, seed or snapshot build: the table's Lance indexes made to match its
     `indexes` config (built, replaced, dropped, or given the new rows), committed through the engine
     (materializations/indexes.py). Logs what changed. --#}
{% macro lancens_build_table_indexes(relation) %}
  {%- set summary = adapter.build_table_indexes(relation, config.get('indexes'), lancens_provenance()) -%}
  {%- if summary -%}
    {{ log("lancens: indexes of " ~ relation ~ ": " ~ summary, info=true) }}
  {%- endif -%}
{% endmacro %}
