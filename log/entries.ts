/**
 * The session log's one `Entry` union: every kind's zod schema, the envelope
 * `{ seq, at, kind, ...fields }`, and the types derived from them. Each
 * schema is written once, in the file of its family (`entries-session.ts`,
 * `entries-steps.ts`, `entries-calls.ts`, `entries-questions.ts`, …) over the
 * values of `entry-values.ts`; every reader and writer parses with `Entry`.
 */
import { z } from 'zod';
import { BudgetAsked, BudgetDecided } from './entries-budget.js';
import { ApprovalAsked, ApprovalDecided, ToolCall, ToolDispatch, ToolResult } from './entries-calls.js';
import { CompactionEnd, CompactionStart, CompactionSummary } from './entries-compaction.js';
import { LogNotDurable, Repair, SessionTakeover } from './entries-durability.js';
import { SessionCancel, SessionCompact, SessionEnd, SessionInput, SessionReopen } from './entries-inputs.js';
import { HookReport, McpServer, SkillsFound } from './entries-plugins.js';
import { QuestionAsked, QuestionDecided } from './entries-questions.js';
import { RalphEnd, RalphHandoff, RalphRound, RalphStart, RalphVerdict, RalphVerify } from './entries-ralph.js';
import { SessionPolicyChange, SessionStart } from './entries-session.js';
import { AssistantMessage, Checkpoint, ModelRetry, RequestHeader, StepEnd, StepStart, TurnEnd, TurnStart, UserMessage } from './entries-steps.js';
import { SubagentEnd, SubagentStart } from './entries-subagents.js';

export const Entry = z.discriminatedUnion('kind', [
  SessionStart,
  TurnStart,
  UserMessage,
  StepStart,
  RequestHeader,
  AssistantMessage,
  ModelRetry,
  ToolCall,
  ApprovalAsked,
  ApprovalDecided,
  ToolDispatch,
  ToolResult,
  StepEnd,
  TurnEnd,
  Checkpoint,
  Repair,
  LogNotDurable,
  SessionTakeover,
  SessionInput,
  SessionCancel,
  SessionCompact,
  SessionEnd,
  SessionReopen,
  SessionPolicyChange,
  HookReport,
  CompactionStart,
  CompactionSummary,
  CompactionEnd,
  SubagentStart,
  SubagentEnd,
  RalphStart,
  RalphRound,
  RalphHandoff,
  RalphVerify,
  RalphVerdict,
  RalphEnd,
  McpServer,
  SkillsFound,
  BudgetAsked,
  BudgetDecided,
  QuestionAsked,
  QuestionDecided,
]);
export type Entry = z.infer<typeof Entry>;
export type EntryKind = Entry['kind'];
export type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

/** An entry before the recorder stamps it: no `seq`, no `at`. */
export type Draft = Entry extends infer E ? (E extends Entry ? Omit<E, 'seq' | 'at'> : never) : never;
export type DraftOf<K extends EntryKind> = Omit<EntryOf<K>, 'seq' | 'at'>;

export const ENTRY_KINDS: readonly EntryKind[] = Entry.options.map((o) => o.shape.kind.value);

/** The entries that record what reached the session from outside: replay sends each again where it stands. */
export const INPUT_KINDS = new Set<EntryKind>(['session/input', 'session/cancel', 'session/compact', 'session/end']);
