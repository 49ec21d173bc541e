-- Version 10 sorts after 2 (by number, not by file name).
CREATE TABLE schema_version (applied text NOT NULL);
INSERT INTO schema_version
SELECT string_agg(column_name, ',' ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_name = 'notes';
