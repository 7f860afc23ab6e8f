/**
 * The path model of each machine, by file name (`machines/<name>.machine.ts`).
 * A machine found in `machines/` with no model here still gets paths (every
 * event sent bare, the state value as the whole key), but the suite fails
 * until it has one: a machine without invariants is not tested, only walked.
 */
import { compactionModel } from './model-compaction.js';
import { sessionModel } from './model-session.js';
import { stepModel } from './model-step.js';
import { subagentModel } from './model-subagent.js';
import { toolCallModel } from './model-tool-call.js';
import { turnModel } from './model-turn.js';
import type { PathModel } from './path-model.js';

export const pathModels: Readonly<Record<string, PathModel>> = {
  compaction: compactionModel,
  'tool-call': toolCallModel,
  step: stepModel,
  turn: turnModel,
  session: sessionModel,
  subagent: subagentModel,
};

export const fallbackModel: PathModel = { generator: 'shortest', check: () => [] };
