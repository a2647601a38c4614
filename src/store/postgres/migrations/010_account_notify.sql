-- Every node keeps the accounts it authenticates and signs with in memory (docs/threading.md, "Account cache").
-- Any write to an account, from any node or from the CLI, tells every node at COMMIT on `ferry_accounts`, so a
-- rotated token is refused and a rotated signing key used at once everywhere. A statement-level trigger: one
-- notification per statement, and PostgreSQL folds identical ones of a transaction into one.
CREATE FUNCTION ferry_accounts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ferry_accounts', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER accounts_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ferry_accounts_changed();
