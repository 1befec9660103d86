{#-- Lance tables have no access control, so a configured `grants:` cannot be applied: every node
     that configures grants gets one warning naming it (each materialization calls apply_grants once),
     instead of silence. Access is the storage's business (file or bucket permissions). --#}
{% macro lancens__apply_grants(relation, grant_config, should_revoke=True) %}
  {%- if grant_config -%}
    {%- do exceptions.warn(
          "grants are not supported by dbt-lancens (Lance tables have no access control): the grants "
          ~ "configured on " ~ relation ~ " were not applied; control access with the storage's permissions") -%}
  {%- endif -%}
{% endmacro %}
