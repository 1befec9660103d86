{#-- Help-center articles with a vector index and a full-text index: searchable from LanceDB and
     pylance the moment `dbt run` ends. The embedding is deterministic (no network, no model
     download): a 16-dimensional hashed bag of words, L2-normalised, so articles sharing words are
     near each other. A real project would compute embeddings in a Python model instead. --#}
{{ config(
    materialized='table',
    indexes=[
        {'columns': ['embedding'], 'type': 'ivf_flat', 'metric': 'cosine', 'num_partitions': 2},
        {'columns': ['body'], 'type': 'fts'},
        {'columns': ['topic'], 'type': 'bitmap'},
    ]) }}

with articles as (
    select * from values
        (1, 'payments', 'Paying with a credit card', 'You can pay for any order with a credit card at checkout.'),
        (2, 'payments', 'Paying by bank transfer', 'A bank transfer takes up to two days before the order ships.'),
        (3, 'payments', 'Gift cards', 'A gift card pays for part or all of an order and never expires.'),
        (4, 'payments', 'Coupons', 'Enter a coupon code at checkout; one coupon per order.'),
        (5, 'returns', 'Returning an order', 'Return an order within thirty days for a full refund.'),
        (6, 'returns', 'Refunds', 'A refund goes back to the card or gift card that paid for the order.'),
        (7, 'returns', 'Damaged jaffles', 'Send us a photo of a damaged jaffle and we refund the order.'),
        (8, 'shipping', 'Shipping times', 'Orders ship the next day and arrive within three days.'),
        (9, 'shipping', 'Tracking an order', 'Every shipped order has a tracking link in its email.'),
        (10, 'shipping', 'Pickup in store', 'Pick up your order in store the same day it is placed.'),
        (11, 'menu', 'Vegetarian jaffles', 'Our vegetarian jaffles have cheese, tomato and spinach.'),
        (12, 'menu', 'Allergens', 'Every jaffle lists its allergens; ask us about gluten free bread.')
        as t(id, topic, title, body)
),

hashed as (
    select
        id, topic, title, body,
        transform(sequence(0, 15), d -> cast(
            size(filter(split(regexp_replace(lower(body), '[^a-z ]', ''), ' '), w -> pmod(hash(w), 16) = d))
            as double)) as counts
    from articles
)

select
    id, topic, title, body,
    transform(counts, c -> c / sqrt(aggregate(counts, 0D, (acc, x) -> acc + x * x))) as embedding
from hashed
