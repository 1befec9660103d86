{#-- Table maintenance (metadata/maintenance.py), for `dbt run-operation lancens.<name>` or hooks. --#}

{#-- Index the rows the table's indexes miss, then compact its fragments; rows unchanged. --#}
{% macro optimize_table(relation) %}
  {%- set result = adapter.optimize_table(relation, lancens_operation_provenance('optimize_table')) -%}
  {{ log("lancens: optimized " ~ relation ~ ": " ~ result['fragments_before'] ~ " -> " ~ result['fragments_after']
        ~ " fragments, " ~ result['rows'] ~ " rows, versions " ~ (result['versions'] | join(', ') or 'none'), info=true) }}
  {{ return(result) }}
{% endmacro %}

{#-- Remove old versions (not the latest, never a tagged one) and the files only they reference:
     those not among the newest `retain_versions` and older than `older_than_days`. Also removes
     what killed writes left in the table (files older than `grace_hours`). A grace below one hour
     could take the files of a run writing now: it is refused unless `allow_short_grace=true`.
     Prints the report. --#}
{% macro cleanup_table_versions(relation, retain_versions=none, older_than_days=none, grace_hours=24, allow_short_grace=false) %}
  {%- set report = adapter.cleanup_table_versions(relation, retain_versions, older_than_days, grace_hours, allow_short_grace) -%}
  {%- do print("lancens: cleanup of " ~ relation ~ ": " ~ report) -%}
  {{ return(report) }}
{% endmacro %}

{#-- `repair_namespace`, `cleanup_table_versions` for every table of the root, then the root's own
     leftovers: scratch directories of killed atomic runs and directories of new tables never
     published (older than `grace_hours`); nothing any table or view registers is touched, and only
     what has a Lance table's shape is removed (a root may hold other files). Without
     retain_versions/older_than_days only leftovers go. `allow_short_grace` as for
     `cleanup_table_versions`. Prints the report. --#}
{% macro cleanup_namespace(retain_versions=none, older_than_days=none, grace_hours=24, allow_short_grace=false) %}
  {%- set report = adapter.cleanup_namespace(retain_versions, older_than_days, grace_hours, allow_short_grace) -%}
  {%- do print("lancens: cleanup of the namespace: " ~ report) -%}
  {{ return(report) }}
{% endmacro %}

{#-- Give every registered view and declared table whose reserved directory is gone (a cleanup before
     older releases deleted views' directories) its `.lance-reserved` back. `cleanup_namespace` runs it
     first; this runs it alone. Prints the report. --#}
{% macro repair_namespace() %}
  {%- set report = adapter.repair_namespace() -%}
  {%- do print("lancens: repair of the namespace: " ~ report) -%}
  {{ return(report) }}
{% endmacro %}
