/**
 * A tool's questions (ADR 0065): what a tool was asked, during its call, to
 * put to a person — an MCP server's input request — and the answer. An
 * approval of its own class, logged like one: the question is flushed before
 * anyone is asked, the decision is logged before the tool hears it, so the
 * log says what the server was told. The question belongs to its call: one
 * left open (a crash, a cancel) is never answered later, since the call
 * that asked is gone. Both stand in their call as the approval entries do
 * (`inCall`), and are decided as they are: an `outcome`, and `by` whom.
 */
import { z } from 'zod';
import { envelope, inCall } from './entry-values.js';

/** A question's id: its call's, and which question of that call (`t1.s2.c1.q1`). */
export const QuestionId = z.string().regex(/^t\d+\.s\d+\.c\d+\.q\d+$/);

export const QuestionField = z.strictObject({
  name: z.string().min(1),
  type: z.enum(['string', 'number', 'integer', 'boolean']),
  title: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean(),
  options: z.array(z.string()).optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

export const QuestionAsked = z.strictObject({
  ...envelope,
  kind: z.literal('question/asked'),
  ...inCall,
  question: QuestionId,
  /** Who asks: the row of the MCP server (`mcp:<name>`). */
  from: z.string(),
  message: z.string(),
  /** The form to fill; empty: a plain yes or no. Absent with `unshowable`. */
  fields: z.array(QuestionField).optional(),
  /** Why the form cannot be shown: the question is declined without asking. */
  unshowable: z.string().optional(),
});

export const QuestionDecided = z.strictObject({
  ...envelope,
  kind: z.literal('question/decided'),
  ...inCall,
  question: QuestionId,
  outcome: z.enum(['accepted', 'declined', 'cancelled']),
  /** Who answered (`terminal`, `ws:<client>`, `acp`), or what decided (`approval policy never`, `no answerer`, `unshowable form`). */
  by: z.string(),
  /** With `accepted`: the form's values, as the tool was given them. */
  values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  /** With `declined`: why, as the tool was told. */
  reason: z.string().optional(),
});
