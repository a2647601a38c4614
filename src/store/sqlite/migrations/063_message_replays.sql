-- A replay is a new message with the request of an earlier one (docs/messaging.md "Retry and replay"): it records
-- the message it replays, and the earlier message's page lists its replays through the partial index.
ALTER TABLE messages ADD COLUMN replay_of TEXT;
CREATE INDEX messages_replay_of ON messages (account_id, replay_of) WHERE replay_of IS NOT NULL;
