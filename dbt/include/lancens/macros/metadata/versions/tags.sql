{#-- Tags name table versions (Lance's own tags, stored with the table): a tagged version is never
     removed by a cleanup, and `at_version(ref('x'), 'tag')` reads it. `relation` is a relation or a
     string `schema.table`. --#}

{#-- Tag `version` (default: the latest) of `relation`; returns the tagged version. --#}
{% macro create_tag(relation, tag, version=none) %}
  {%- set tagged = adapter.create_table_tag(relation, tag, none if version is none else version | int) -%}
  {{ log("lancens: tagged " ~ relation ~ " version " ~ tagged ~ " as " ~ tag, info=true) }}
  {{ return(tagged) }}
{% endmacro %}

{#-- Remove a tag (the version stays until a cleanup removes it); returns the version it named. --#}
{% macro delete_tag(relation, tag) %}
  {%- set version = adapter.delete_table_tag(relation, tag) -%}
  {{ log("lancens: deleted tag " ~ tag ~ " of " ~ relation ~ " (version " ~ version ~ ")", info=true) }}
  {{ return(version) }}
{% endmacro %}

{#-- Print the tags of `relation`; returns them (dicts: tag, version, created_at). --#}
{% macro list_tags(relation) %}
  {%- set rows = adapter.list_table_tags(relation) -%}
  {%- do print(adapter.format_table_tags(relation, rows)) -%}
  {{ return(rows) }}
{% endmacro %}
