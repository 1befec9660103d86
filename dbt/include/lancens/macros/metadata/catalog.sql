{#-- The catalog is built in Python from the namespace engine (metadata/catalog.py: one manifest read, Lance
     metadata per table), never by SHOW TABLE EXTENDED. dbt's catalog macros reach the same code, so
     a project or package that calls them directly gets the same rows. --#}
{% macro lancens__get_catalog(information_schema, schemas) -%}
  {{ return(adapter.catalog_rows(schemas=schemas)) }}
{%- endmacro %}


{% macro lancens__get_catalog_relations(information_schema, relations) -%}
  {{ return(adapter.catalog_rows(relations=relations)) }}
{%- endmacro %}
