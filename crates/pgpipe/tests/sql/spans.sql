-- name: get_messages :many
SELECT mid FROM messages WHERE uid = :uid AND secret = :secret ORDER BY mid;

-- name: all_messages :stream
SELECT mid FROM messages WHERE uid = :uid ORDER BY mid;
