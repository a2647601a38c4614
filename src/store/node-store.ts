/** Numbers a database hands out once each, to tell the processes that share it apart. */
export interface NodeStore {
  /**
   * A number no earlier call on this database returned, from any process (a PostgreSQL sequence; a counter row
   * in SQLite, written through group commit). Each process takes one at start for the ids it mints (DlqIdMinter).
   */
  nodeNumberTake(): Promise<number>;
}
