-- The failure callback message of a failed run (docs/workflows.md "Failures"): the run logs' failureFunction block
-- and the workflow DLQ's failureCallbackInfo read its state from that message's log entries.
ALTER TABLE workflow_runs ADD COLUMN failure_message_id TEXT;
