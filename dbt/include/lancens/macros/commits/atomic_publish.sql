{#-- Atomic publish (profile `atomic_publish: true` or var `lancens_atomic_publish: true`). A project
     that wants it adds both hooks to its dbt_project.yml (README "Versions, registration, time travel"):
       on-run-start: ["{{ lancens_begin_atomic_publish() }}"]
       on-run-end: ["{{ lancens_end_atomic_publish(results) }}"]
     Writes of the run are staged; at the end they are published together if no node failed. --#}
{% macro lancens_begin_atomic_publish() %}
  {%- do adapter.begin_atomic_publish(
        var('lancens_atomic_publish', false), invocation_id, lancens_selected_tables_with_persist_docs()) -%}
  {{ return('') }}
{% endmacro %}

{#-- The selected nodes that build Lance tables and persist docs: a staged version cannot carry the
     descriptions (Lance writes them as a version of their own), so an atomic run refuses them. --#}
{% macro lancens_selected_tables_with_persist_docs() %}
  {%- set documented = [] -%}
  {#-- dbt renders the hook once while parsing, without a graph: only look when it executes --#}
  {%- for unique_id in (selected_resources if execute else []) -%}
    {%- set node = graph.nodes.get(unique_id) -%}
    {%- if node and node.config.materialized in ('table', 'incremental', 'seed', 'snapshot') -%}
      {%- set persist_docs = node.config.get('persist_docs') or {} -%}
      {%- if persist_docs.get('relation') or persist_docs.get('columns') -%}
        {%- do documented.append(node.resource_type ~ ' ' ~ node.name) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(documented) }}
{% endmacro %}

{% macro lancens_end_atomic_publish(results) %}
  {%- set statuses = [] -%}
  {%- for result in results -%}
    {%- do statuses.append(result.status) -%}
  {%- endfor -%}
  {%- set published = adapter.end_atomic_publish(statuses) -%}
  {%- if published -%}
    {{ log("lancens: published " ~ published | length ~ " table version(s) together", info=true) }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}
