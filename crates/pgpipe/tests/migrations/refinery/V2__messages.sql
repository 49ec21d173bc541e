-- Several statements in one migration file, as refinery allows.
CREATE TABLE messages (id int8 PRIMARY KEY, owner int8 NOT NULL REFERENCES users, subject text);
CREATE INDEX messages_owner ON messages (owner);
