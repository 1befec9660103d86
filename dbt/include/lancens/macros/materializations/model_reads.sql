{#-- The relations a model reads (refs and sources), for a view's base_objects. --#}
{% macro lancens_model_reads(model) %}
  {%- set reads = [] -%}
  {%- for unique_id in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
    {%- if node is not none and node.resource_type in ('model', 'seed', 'snapshot', 'source')
          and node.config.get('materialized') != 'ephemeral' -%}
      {%- set identifier = node.identifier if node.resource_type == 'source' else node.alias -%}
      {%- do reads.append(api.Relation.create(schema=node.schema, identifier=identifier)) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(reads) }}
{% endmacro %}
