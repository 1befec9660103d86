{#-- A namespace root is one database: every node's database is the root's name (the profile's
     `database`), which relations carry for dbt's cache and catalog and never render in SQL
     (dbt-spark's macro returns none instead). A node configuring another database is refused. --#}
{% macro lancens__generate_database_name(custom_database_name=none, node=none) -%}
  {%- if custom_database_name is not none and custom_database_name | trim != target.database -%}
    {{ exceptions.raise_compiler_error(
          "dbt-lancens has one database, the namespace root '" ~ target.database ~ "': remove `database: "
          ~ custom_database_name ~ "` from " ~ (node.unique_id if node else "the configuration")) }}
  {%- endif -%}
  {{ return(target.database) }}
{%- endmacro %}
