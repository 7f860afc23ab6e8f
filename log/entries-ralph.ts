/**
 * The entries of a Ralph run (`bridle ralph`, ADR 0024): its start, each
 * round, the handoff a round leaves, the check of a claim of complete, and
 * the end. Part of the one `Entry` union in `entries.ts`.
 */
import { z } from 'zod';
import { codes, type CodeOf } from './codes.js';
import { envelope, TurnEndReason } from './entry-values.js';

/**
 * A Ralph round's structured handoff to the next round (`bridle ralph`):
 * what it claims, what it did, what shows it, what is left. Capped as a
 * whole (HANDOFF_CAP_BYTES of JSON); over the cap is the child's to fix.
 */
export const Handoff = z.strictObject({
  status: z.enum(['continue', 'complete', 'blocked']),
  summary: z.string(),
  evidence: z.string(),
  nextSteps: z.array(z.string()).optional(),
  blockerText: z.string().optional(),
});
export type Handoff = z.infer<typeof Handoff>;
export const HANDOFF_CAP_BYTES = 4096;

/** A Ralph run begins: the immutable objective, the round cap, and how a claim of complete is checked. */
export const RalphStart = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/start'),
  objective: z.string().min(1),
  rounds: z.int().positive(),
  verify: z.string().nullable(),
  verifier: z.boolean(),
});
/** Round `round` begins in a fresh child session (`attempt` > 1: the round again, after the one before it was interrupted). */
export const RalphRound = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/round'),
  round: z.int().positive(),
  attempt: z.int().positive(),
  child: z.string().min(1),
});
/** The round ended: how its child's turn ended, and the handoff it left (`tool`: through the handoff tool; `last-text`: it left none). */
export const RalphHandoff = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/handoff'),
  round: z.int().positive(),
  child: z.string().min(1),
  reason: TurnEndReason,
  source: z.enum(['tool', 'last-text', 'interrupted']),
  handoff: Handoff,
});
/** A claim of complete is being checked: by the `--verify` command, or by a verifier agent (`child`). */
export const RalphVerify = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/verify'),
  round: z.int().positive(),
  by: z.enum(['command', 'agent']),
  command: z.string().optional(),
  child: z.string().optional(),
});
/** The codes a Ralph run writes: a `ralph/verdict`'s `code` (why the check could not say, or said no), and the handoff tool's result. */
export const RalphCode = codes({
  INTERRUPTED: 'ralph/verdict: the check was cancelled, or cut off by a crash (written when the run resumes; the check runs again).',
  TIMEOUT: 'ralph/verdict: the verify command passed its deadline.',
  VERIFY_FAILED: 'ralph/verdict: the verify command did not run (its own error code is written instead when it has one).',
  NO_VERDICT: 'ralph/verdict: the verifier agent ended without a verdict.',
  UNCITED: 'ralph/verdict: the verifier cited a path it never read; its verdict does not count.',
  HANDOFF_TOO_LARGE: 'tool/result of `handoff`: the handoff is over its cap and was not recorded.',
});
export type RalphCode = CodeOf<typeof RalphCode>;

/** What the check found: `verified`, the output it is based on (capped), the command's exit code, or why it could not say (`code`). */
export const RalphVerdict = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/verdict'),
  round: z.int().positive(),
  by: z.enum(['command', 'agent']),
  verified: z.boolean(),
  output: z.string(),
  exitCode: z.int().nullable().optional(),
  code: z.string().min(1).optional(),
});
/** The run ended: verified complete, out of rounds, blocked (with its blocker), cancelled. */
export const RalphEnd = z.strictObject({
  ...envelope,
  kind: z.literal('ralph/end'),
  outcome: z.enum(['verified', 'exhausted', 'blocked', 'cancelled']),
  round: z.int().nonnegative(),
  blockerText: z.string().optional(),
});
