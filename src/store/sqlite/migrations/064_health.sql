-- The console's health read-outs (docs/console.md "Health", src/store/sqlite/health.ts): each reads one account's
-- rows of the chosen period through one of these indexes, so its cost follows the period, never the whole history.
-- Deliveries of the period (publish→delivery latency, a queue's throughput): delivered rows only, which a delivery's
-- UPDATE already moves into messages_ended; failed and cancelled rows are not in it.
CREATE INDEX messages_delivered ON messages (account_id, finished_at) WHERE state = 'DELIVERED';
-- Failed attempts of the period (destinations ranked by failures, with their last error): ERROR and FAILED entries
-- only, so a successful delivery writes nothing more.
CREATE INDEX logs_failures ON logs (account_id, time) WHERE (state = 'ERROR' OR state = 'FAILED');
