-- The ACTIVE counts of flow_accounts (the triggers of migration 005) kept without a statement journal on the hot path
-- (docs/threading.md "The P1 path now"). A statement that fires a trigger writes more than one table, and SQLite then
-- opens a statement journal (a copy of every page the statement writes, to undo the statement alone) whenever the
-- statement may abort. An UPSERT's DO UPDATE into a WITHOUT ROWID table always may (SQLite codes a "corrupt
-- database" check that aborts), whatever the conflict clause of the statement firing it: so every publish's INSERT
-- and every delivery's UPDATE copied its pages into a journal nothing ever read. The same counts, in two steps that
-- cannot abort once the firing statement says `OR FAIL` (src/store/sqlite/context.ts, messages.ts): the row is made
-- if missing (DO NOTHING, which codes no such check), then counted. The first step's value is chosen so that the
-- second gives what the UPSERT gave on a missing row (1 entering ACTIVE, 0 leaving it).
DROP TRIGGER messages_active_insert;
CREATE TRIGGER messages_active_insert AFTER INSERT ON messages WHEN NEW.state = 'ACTIVE'
BEGIN
  INSERT INTO flow_accounts (account_id, active) VALUES (NEW.account_id, 0) ON CONFLICT (account_id) DO NOTHING;
  UPDATE flow_accounts SET active = active + 1 WHERE account_id = NEW.account_id;
END;
DROP TRIGGER messages_active_update;
CREATE TRIGGER messages_active_update AFTER UPDATE OF state ON messages
  WHEN (OLD.state = 'ACTIVE') <> (NEW.state = 'ACTIVE')
BEGIN
  INSERT INTO flow_accounts (account_id, active)
    VALUES (NEW.account_id, CASE WHEN NEW.state = 'ACTIVE' THEN 0 ELSE 1 END)
    ON CONFLICT (account_id) DO NOTHING;
  UPDATE flow_accounts SET active = active + CASE WHEN NEW.state = 'ACTIVE' THEN 1 ELSE -1 END
    WHERE account_id = NEW.account_id;
END;
