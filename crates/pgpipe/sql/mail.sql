-- Named queries of the mail service (see examples/named_queries.rs).
-- Each block is one statement; `:name` placeholders become $1, $2, ...

-- name: insert_message :exec
INSERT INTO mail.messages (uid, mid, subject, snippet, attaches)
VALUES (:uid, :mid, :subject, :snippet, :attaches);

-- Messages of one user by id, newest first. `mids` is one array
-- parameter, however many ids it holds.
-- name: get_messages :many
SELECT mid, subject, snippet, seen, attaches
  FROM mail.messages
 WHERE uid = :uid AND mid = ANY(:mids)
 ORDER BY received DESC, mid;

-- name: count_unread :one
SELECT count(*) AS unread
  FROM mail.messages
 WHERE uid = :uid AND NOT seen;

-- name: mark_seen :execrows
UPDATE mail.messages SET seen = true
 WHERE uid = :uid AND mid = ANY(:mids) AND NOT seen;

-- name: stream_mailbox :stream
SELECT mid, subject, snippet, seen, attaches
  FROM mail.messages
 WHERE uid = :uid
 ORDER BY mid;
