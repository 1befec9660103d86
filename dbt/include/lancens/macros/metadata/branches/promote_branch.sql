{#-- Promote `branch` (a branch target's `branch:`): every table it changed becomes main's next
     version with the branch's rows, no data copied, all in one commit under table version
     management. Refused, changing nothing, when main moved after the branch was made (naming the
     tables). Returns {table: main's new version}. --#}
{% macro promote_branch(branch) %}
  {%- set promoted = adapter.promote_branch(branch, lancens_operation_provenance('promote_branch')) -%}
  {%- for table, version in promoted.items() -%}
    {{ log("lancens: promoted branch " ~ branch ~ " of " ~ table ~ " as main's version " ~ version, info=true) }}
  {%- endfor -%}
  {{ return(promoted) }}
{% endmacro %}
