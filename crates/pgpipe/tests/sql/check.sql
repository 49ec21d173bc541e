-- Queries of tests/named_queries.rs (line numbers are asserted there).

-- name: user_by_id :one
SELECT id, name, nick FROM app.users WHERE id = :id;

-- name: user_name :one
SELECT name FROM app.users WHERE id = :id;

-- name: count_logins :one
SELECT count(*) AS n FROM app.logins WHERE uid = :uid;

-- name: user_age :one
SELECT age FROM app.users WHERE id = :id;

-- name: users_by_age :many
SELECT id FROM app.users WHERE age = :age;

-- name: nick_plain :one
SELECT nick FROM app.users WHERE id = :id;

-- name: add_user :exec
INSERT INTO app.users (id, name, nick, age) VALUES (:id, :name, :nick, :age);
