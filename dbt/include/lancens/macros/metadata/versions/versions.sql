{#-- Table history: every dbt build is a Lance version that records who made it. --#}

{#-- Print version, time, rows and who made each version of `relation`; returns the rows (dicts). --#}
{% macro list_table_versions(relation) %}
  {%- set rows = adapter.list_table_versions(relation) -%}
  {%- do print(adapter.format_table_versions(relation, rows)) -%}
  {{ return(rows) }}
{% endmacro %}

{#-- Commit a new version whose content equals `version`, a version number or a tag (nothing is
     deleted). Returns the new version. --#}
{% macro restore_table(relation, version) %}
  {%- set new_version = adapter.restore_table(relation, version, lancens_operation_provenance('restore_table')) -%}
  {{ log("lancens: restored " ~ relation ~ " to " ~ ("version " if version is number else "tag ") ~ version
        ~ " as version " ~ new_version, info=true) }}
  {{ return(new_version) }}
{% endmacro %}
