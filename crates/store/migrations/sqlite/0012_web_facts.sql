-- What the website reads of a finished game's record (issue 53;
-- PostgreSQL migration 0014): crate::facts::GameFacts as JSON, written
-- with the record. NULL for games stored before: the pages read their
-- records instead.
ALTER TABLE games ADD COLUMN facts TEXT;
