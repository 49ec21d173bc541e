CREATE TABLE users (id int8 PRIMARY KEY, email text NOT NULL);
INSERT INTO users VALUES (1, 'a@example.com');
