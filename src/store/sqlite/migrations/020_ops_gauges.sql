-- /metrics counts messages waiting behind a FIFO queue's head (docs/metrics.md) through this index, never by
-- scanning the hot table; the other states already have partial indexes (messages_due, messages_active,
-- messages_flow_waiting).
CREATE INDEX messages_queued ON messages (seq) WHERE state = 'QUEUED';
