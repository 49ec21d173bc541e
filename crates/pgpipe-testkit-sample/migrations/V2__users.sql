CREATE TABLE users (
    name text PRIMARY KEY,
    joined date NOT NULL DEFAULT current_date
);
-- Applied after V1: refers to its table.
ALTER TABLE notes ADD COLUMN pinned boolean NOT NULL DEFAULT false;
