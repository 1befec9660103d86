{#-- dbt-spark's table-layout configs (`file_format`, `location_root`, `partition_by`,
     `clustered_by`, `buckets`, `options`) shape Hive tables. A Lance table in a namespace has its
     format, place and layout from the namespace, so a project brought over from dbt-spark gets one
     warning per node naming what was not applied, instead of silence (as for grants).
     `partition_by` is used by the insert_overwrite strategy only. --#}
{% macro lancens_warn_spark_layout_configs(relation) %}
  {%- set ignored = [] -%}
  {%- set file_format = config.get('file_format') -%}
  {%- if file_format and file_format | lower != 'lance' -%}
    {%- do ignored.append("file_format '" ~ file_format ~ "' (every table is written as Lance)") -%}
  {%- endif -%}
  {%- for name in ['location_root', 'clustered_by', 'buckets', 'options'] -%}
    {%- if config.get(name) -%}{%- do ignored.append(name) -%}{%- endif -%}
  {%- endfor -%}
  {%- set overwrites_partitions = config.get('materialized') == 'incremental'
        and config.get('incremental_strategy') == 'insert_overwrite' -%}
  {%- if config.get('partition_by') and not overwrites_partitions -%}
    {%- do ignored.append('partition_by (a Lance table is not partitioned; only the insert_overwrite '
          ~ 'strategy uses it)') -%}
  {%- endif -%}
  {%- if ignored -%}
    {%- do exceptions.warn("dbt-lancens did not apply these dbt-spark configs of " ~ relation ~ ": "
          ~ ignored | join(', ') ~ "; a Lance table's location and layout come from the namespace") -%}
  {%- endif -%}
{% endmacro %}
