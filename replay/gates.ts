/**
 * Gates: every outcome replay hands back to the machines (a tool's output, a
 * decision, an approval answer, a flush) waits behind one, and the driver
 * opens them in the order the log shows their effects. A gate that names the
 * entry it leads to is opened when that entry is next; a silent one (a
 * flush, an allow) when nothing named is, oldest first.
 */
import type { Entry } from '../log/entries.js';

export interface Gate {
  readonly id: number;
  /** The entry opening this gate writes next, if it writes one at once. */
  readonly leadsTo?: (e: Entry) => boolean;
  /** Opened when no named gate fits the next entry. */
  readonly silent: boolean;
  open(): void;
}

export class Gates {
  private pending: Gate[] = [];
  private next = 0;

  constructor(private readonly onChange: () => void) {}

  /** Contract: the promise settles only when the driver opens the gate (never, if it does not). */
  wait<T>(o: { leadsTo?: (e: Entry) => boolean; silent?: boolean }, settle: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const gate: Gate = {
        id: this.next++,
        silent: o.silent ?? false,
        ...(o.leadsTo ? { leadsTo: o.leadsTo } : {}),
        open: () => {
          this.pending = this.pending.filter((g) => g !== gate);
          this.onChange();
          try {
            resolve(settle());
          } catch (err) {
            reject(err);
          }
        },
      };
      this.pending.push(gate);
      this.onChange();
    });
  }

  /** The gate whose effect is `e`. */
  leadingTo(e: Entry | undefined): Gate | undefined {
    return e && this.pending.find((g) => g.leadsTo?.(e));
  }

  /** The oldest silent gate. */
  oldestSilent(): Gate | undefined {
    return this.pending.find((g) => g.silent);
  }

  /** Forgets every pending gate (the segment's process ended); their promises never settle. */
  drop(): void {
    this.pending = [];
  }

  get size(): number {
    return this.pending.length;
  }
}
