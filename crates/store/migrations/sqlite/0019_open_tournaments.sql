-- The tournaments driver looks five times a second for tournaments to
-- start or to drive (issue 53): this index holds those alone, so that it
-- does not read every tournament ever held. The PostgreSQL migration is
-- 0021.
CREATE INDEX tournaments_open ON tournaments (id)
    WHERE status IN ('scheduled', 'running');
