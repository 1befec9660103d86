{#-- After a build, after its indexes: the optional `lance_maintenance` config (optimize once the table
     has too many fragments, keep the newest versions; definitions/maintenance_config.py).
     Without the config nothing runs. Logs what was done. --#}
{% macro lancens_run_table_maintenance(relation) %}
  {%- set done = adapter.maintain_table(relation, config.get('lance_maintenance'), lancens_provenance()) -%}
  {%- if done -%}
    {{ log("lancens: maintenance of " ~ relation ~ ": " ~ done, info=true) }}
  {%- endif -%}
{% endmacro %}
