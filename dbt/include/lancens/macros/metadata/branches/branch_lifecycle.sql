{#-- The branches of the root's tables (a branch target makes one per table it writes). --#}

{#-- Print every table's branches; returns them (dicts: branch, table, from_branch, from_version, version). --#}
{% macro list_branches() %}
  {%- set rows = adapter.list_branches() -%}
  {%- do print(adapter.format_branches(rows)) -%}
  {{ return(rows) }}
{% endmacro %}

{#-- Delete `branch` from every table that has it (refused for a promoted branch: main reads its
     files); returns those tables. --#}
{% macro delete_branch(branch) %}
  {%- set tables = adapter.delete_branch(branch) -%}
  {{ log("lancens: deleted branch " ~ branch ~ " of " ~ (tables | join(', ')), info=true) }}
  {{ return(tables) }}
{% endmacro %}
