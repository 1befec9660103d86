{#-- A model that changes kind (table <-> view) drops its old object at once, where an atomic-publish
     run holds everything else back until its publish: a failed run would have published the drop
     (a table's data deleted) and nothing else. So the switch is refused in such a run. --#}
{% macro lancens_drop_for_kind_switch(existing_relation, new_kind, on_drop='purge') %}
  {% do adapter.refuse_in_atomic_run(
        'turning ' ~ existing_relation.type ~ ' ' ~ existing_relation ~ ' into a ' ~ new_kind) %}
  {% do adapter.drop_relation(existing_relation, on_drop) %}
{% endmacro %}
