-- Hosted programs in tournaments (issue 15): at the start, a hosted entry is
-- frozen to its newest active version (`bot_versions.id` and its number);
-- every game of the entry runs exactly that version, even if its owner
-- uploads a newer one while the tournament runs.
ALTER TABLE tournament_entries ADD COLUMN version_id INTEGER REFERENCES bot_versions(id);
ALTER TABLE tournament_entries ADD COLUMN version INTEGER;
