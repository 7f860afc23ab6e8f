/**
 * `bridle fork <session> [--at <seq>] [--answer <approval|input>]`: a new
 * session whose log begins with the original's, up to the last completed
 * turn at or before `--at` (ADR 0029); with `--answer`, one logged approval
 * answered anew (`deny`; `approve` leaves it to be asked again, ADR 0038) or
 * one input replaced. Runs no tool and calls no model; ends
 * with `log: <path>` of the fork. Exit 0 forked, 2 refused (a point inside a
 * turn, named with the nearest valid ones) or a usage error.
 */
import { freshSessionId } from '../runtime/catalogue.js';
import type { Clock } from '../log/clock.js';
import type { ComposedRow } from '../plugins/rows.js';
import { forkSession, ForkRefusedError } from '../runtime/logs/fork.js';
import { resumableTurn } from '../log/resumable.js';
import { UsageError } from './errors.js';
import { bridleHome, logAccessAsUsage } from './home.js';
import { looksLikePath, sessionOfRef } from '../runtime/stores.js';
import { composeStoreRows } from './settings.js';
import { visible } from './visible.js';

export interface ForkFlags {
  at?: string;
  answer?: string;
  /** Where the session lives: a postgres:// URL, or the JSONL directory (default `$BRIDLE_HOME/sessions`). */
  store?: string;
}

function parseAt(at: string | undefined): number | undefined {
  if (at === undefined) return undefined;
  if (!/^\d+$/.test(at) || Number(at) < 1) throw new UsageError(`--at: a seq (a whole number from 1), not ${JSON.stringify(at)}`);
  return Number(at);
}

export async function forkCommand(
  ref: string,
  flags: ForkFlags,
  io: { out: { write(s: string): unknown }; err: { write(s: string): unknown } } = { out: process.stdout, err: process.stderr },
  o: { clock?: Clock; id?: string } = {},
): Promise<number> {
  const at = parseAt(flags.at);
  // Only the store row, composed as `run` composes it (it calls no model and runs no tool); a log named by its path is that file.
  const rows: ComposedRow[] = flags.store === undefined && looksLikePath(ref) ? [] : await composeStoreRows(flags);
  const { store, id } = sessionOfRef(rows, bridleHome(), ref);
  const forkId = o.id ?? freshSessionId();
  let forked;
  try {
    forked = await forkSession({ store, session: id, id: forkId, clock: o.clock ?? Date.now, ...(at !== undefined ? { at } : {}), ...(flags.answer !== undefined ? { answer: flags.answer } : {}) });
  } catch (err) {
    if (err instanceof ForkRefusedError) {
      io.err.write(`bridle: ${err.code}: ${visible(err.message)}\n`);
      return 2;
    }
    logAccessAsUsage(err);
  }
  if (forked.asks !== undefined) {
    // A what-if approve is a question, not an approval (ADR 0038): even the user's own fork asks before the call runs.
    io.err.write(`forked: ${forked.forkOf.session} up to seq ${forked.forkOf.seq} as ${forked.id}; the approval at seq ${forked.forkOf.seq + 1} is left unanswered: ${forked.asks} is asked again when the fork goes on, not approved by the fork; nothing was re-run\n`);
  } else {
    io.err.write(`forked: ${forked.forkOf.session} up to seq ${forked.forkOf.seq} as ${forked.id}${flags.answer !== undefined ? `, seq ${forked.forkOf.seq + 1} answered anew` : ''}; nothing was re-run\n`);
  }
  const turn = forked.open ? resumableTurn(forked.entries) : undefined;
  // A re-answered approval whose step ran nothing else goes on in its own turn (ADR 0031): asked again for an approve (ADR 0038); otherwise resume closes it.
  if (turn && forked.asks !== undefined) io.err.write(`go on: bridle resume ${forked.location} (asks for ${forked.asks} again: answer it at the terminal under --approval ask; --approval never refuses it)\n`);
  else if (turn) io.err.write(`go on: bridle resume ${forked.location} (the answered turn goes on with this answer)\n`);
  else if (forked.open) io.err.write(`go on: bridle resume ${forked.location} --continue (the answered turn is open; resume closes it)\n`);
  else if (forked.entries.at(-1)?.kind === 'session/input') io.err.write(`go on: bridle resume ${forked.location} (runs the new input)\n`);
  else io.err.write(`go on: bridle run --session ${forked.location} "what if …"\n`);
  io.out.write(`log: ${forked.location}\n`);
  return 0;
}
