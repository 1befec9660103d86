{#-- Registering tables in the namespace. `relation` is a relation (ref/source/api.Relation) or a
     string `schema.table`. Usable in models, hooks and `dbt run-operation lancens.<name>`. --#}

{#-- Reserve a table's id and location without data (spec DeclareTable). Returns the location. --#}
{% macro declare_table(relation) %}
  {%- set location = adapter.declare_table(relation) -%}
  {{ log("lancens: declared " ~ relation ~ " at " ~ location, info=true) }}
  {{ return(location) }}
{% endmacro %}

{#-- Register an existing Lance table (a location under the root) under a name. Returns its version. --#}
{% macro register_table(relation, location) %}
  {%- set version = adapter.register_table(relation, location) -%}
  {{ log("lancens: registered " ~ relation ~ " (version " ~ version ~ ") from " ~ location, info=true) }}
  {{ return(version) }}
{% endmacro %}

{#-- Remove a table from the namespace and keep its files (they can be registered again). --#}
{% macro deregister_table(relation) %}
  {%- set location = adapter.deregister_table(relation) -%}
  {{ log("lancens: deregistered " ~ relation ~ "; its files stay at " ~ location, info=true) }}
  {{ return(location) }}
{% endmacro %}

{#-- purge=false: deregister (files kept); purge=true: delete the table's data as well. --#}
{% macro drop_table(relation, purge=false) %}
  {%- set purge = adapter.macro_flag(purge, 'purge') -%}
  {%- set location = adapter.drop_table(relation, purge) -%}
  {{ log("lancens: dropped " ~ relation ~ (" and deleted " if purge else "; files kept at ") ~ location, info=true) }}
  {{ return(location) }}
{% endmacro %}
