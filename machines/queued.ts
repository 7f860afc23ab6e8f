/**
 * Input admitted but not yet taken by a turn: the `seq` of its
 * `session/input` (what the taking entry's `from` names, ADR 0021), its
 * text, and who sent it when that is not the user (a resume note, a
 * plugin's advisory).
 */
import type { Origin } from '../log/entry-values.js';

export interface Queued {
  seq: number;
  text: string;
  origin?: Origin;
}
