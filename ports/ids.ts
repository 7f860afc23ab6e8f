/** The `ids` service's port: where new session ids come from (the log's own ids, `t3.s2.c1`, come from the machines' counters: `log/ids.ts`). */
export interface Ids {
  /** A fresh, unique session id. */
  session(): string;
}
