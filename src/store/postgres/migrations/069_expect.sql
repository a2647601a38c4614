-- A premise check for pipelined transactions (src/store/postgres/write-batch-tx.ts, Tx.defer; docs/postgres.md "One
-- round trip per transaction"): a write sent without waiting for what it depends on states what it assumed, and
-- this fails the transaction when that no longer holds. Nothing is committed then, and the node runs the batch again,
-- reading first. PostgreSQL only (the SQLite adapter runs in process and needs no such check), hence no SQLite 069.
CREATE FUNCTION ferry_expect(p_holds BOOLEAN, p_what TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_holds IS NOT TRUE THEN
    RAISE EXCEPTION 'ferry: % changed since it was read; the batch runs again', p_what USING ERRCODE = 'FE001';
  END IF;
  RETURN TRUE;
END
$$;
