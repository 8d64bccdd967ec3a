-- Issue 13 (wk): a pull bot's mailbox is bounded, as on one process. The
-- highest sequence number the bot acknowledged (messages up to it are
-- dropped) is kept with its next one, so a post knows how many messages
-- wait without counting them: next_seq - acked.
ALTER TABLE pull_boxes ADD COLUMN acked BIGINT NOT NULL DEFAULT 0;
