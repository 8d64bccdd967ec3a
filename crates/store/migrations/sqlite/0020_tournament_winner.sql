-- A finished tournament's winner, as its standings said at its end
-- (issue 53): the lists of tournaments show it without reading every
-- planned game of it again. Null for a tournament that is not finished,
-- and for one finished before this (its standings are read then). The
-- PostgreSQL migration is 0022.
ALTER TABLE tournaments ADD COLUMN winner TEXT;
