-- name: select_one :one
SELECT 1 AS one WHERE :x::int4 >= 0;
