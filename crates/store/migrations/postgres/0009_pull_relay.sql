-- Issue 13: pull bots' mailboxes shared by the processes on one database,
-- so that a pull bot's long poll and its answers may reach any instance
-- while its match runs in another process (an instance or a worker).
-- UNLOGGED: live state, never a record (a match in progress is closed if
-- its process or PostgreSQL stops).

-- One row per pull bot: its next sequence number (the row lock orders the
-- messages of one bot), and whether it is polling.
CREATE UNLOGGED TABLE pull_boxes (
    bot        BIGINT      PRIMARY KEY,
    next_seq   BIGINT      NOT NULL DEFAULT 0,
    -- A long poll is open until then.
    poll_until TIMESTAMPTZ,
    -- When the bot's last poll ended.
    last_poll  TIMESTAMPTZ
);

-- Messages waiting for the bot to fetch them (dropped once acknowledged).
CREATE UNLOGGED TABLE pull_messages (
    bot     BIGINT NOT NULL,
    seq     BIGINT NOT NULL,
    tag     TEXT   NOT NULL,
    message TEXT   NOT NULL,
    PRIMARY KEY (bot, seq)
);

-- The open matches of pull bots and the process that plays each (its
-- home), where an answer is relayed.
CREATE UNLOGGED TABLE pull_matches (
    bot  BIGINT NOT NULL,
    tag  TEXT   NOT NULL,
    home BIGINT NOT NULL,
    PRIMARY KEY (bot, tag)
);
