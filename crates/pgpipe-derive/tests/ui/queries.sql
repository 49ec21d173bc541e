-- Queries for the Query derive's compile-fail tests.

-- name: get_messages :many
SELECT mid, subject
  FROM mail.messages
 WHERE uid = :uid
   AND mid = ANY(:mids);
