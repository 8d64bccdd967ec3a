-- Issue 13: one registry of live processes. The server instances of the
-- REST hub are the `serve` processes of `ladder_processes` (one heartbeat,
-- one expiry rule, one reaper); `hub_seats.home` names such a process, and
-- every game a process deals names it in `games.leased_by`, so the games
-- of a process that dies (REST games, people's games, tournament games,
-- ladder matches) are closed by the survivors, even after PostgreSQL lost
-- the unlogged live tables in a crash.
DROP TABLE hub_instances;
-- Seats and waiting bots of the old registry's instances are stale.
DELETE FROM hub_seats;
DELETE FROM hub_waiting;
