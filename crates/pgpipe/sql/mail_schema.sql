-- The mail schema the named-query example and tests run against (the
-- reference talk's `mail.attach[]` message table).
CREATE SCHEMA IF NOT EXISTS mail;
CREATE TYPE mail.attach AS (filename text, type text, size bigint);
CREATE TABLE mail.messages (
    uid      bigint      NOT NULL,
    mid      bigint      NOT NULL,
    subject  text        NOT NULL,
    snippet  text,
    seen     boolean     NOT NULL DEFAULT false,
    received timestamptz NOT NULL DEFAULT now(),
    attaches mail.attach[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (uid, mid)
);
