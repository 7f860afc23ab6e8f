/**
 * A whole session for tests: memory store, a stepping clock, a reactive
 * scripted model that records every request, the real built-in tools in a
 * temp workspace. Nothing here reaches the network.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelProvider } from '../../ports/model.js';
import { createSession } from '../../runtime/session.js';
import type { BridleSession } from '../../runtime/bridle-session.js';
import type { SessionFeedListener } from '../../runtime/wiring/feed.js';
import type { SessionOptions } from '../../runtime/session-options.js';
import { loggedWorkspace } from '../../runtime/session-policy.js';
import { createScriptedProviderFromFunction, type ResponseFunction } from '../../adapters/model/scripted.js';
import { createMemoryStore, type MemoryStore } from '../../adapters/store/memory.js';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { ApprovalRule } from '../../log/entries-calls.js';
import type { Entry } from '../../log/entries.js';
import type { ApprovalPolicy } from '../../ports/approval.js';
import type { RetryPolicy } from '../../ports/loop.js';
import type { ToolDefinition } from '../../ports/tools.js';
import type { LogStore } from '../../log/store.js';
import type { PatchEntry } from '../../plugins/rows.js';
import type { ModelRequest } from '../../log/messages.js';
import { tempDir } from './temp.js';

/** A clock that advances one millisecond per reading from a fixed epoch. */
export function steppingClock(start = Date.UTC(2026, 0, 1)): () => number {
  let t = start;
  return () => t++;
}

export interface Harness {
  session: BridleSession;
  store: MemoryStore;
  workspace: string;
  bridleHome: string;
  /** Every request the model received, with the log length at that moment. */
  requests: { request: ModelRequest; entries: number }[];
  entries(): readonly Entry[];
  cleanup(): void;
}

/**
 * What a test may change of a harness session: the session's own options, and shorthands that the
 * harness turns into rows, settings and services the way any host would (it assembles nothing itself).
 */
export interface HarnessOptions extends Partial<SessionOptions> {
  /** The tools themselves, in the place of the `tool:*` rows. */
  tools?: ToolDefinition[];
  /** One log for this session: a memory store (read back by `h.store`), or any other. */
  store?: MemoryStore | LogStore;
  approval?: ApprovalPolicy;
  approvalRules?: readonly ApprovalRule[];
  answerTimeoutMs?: number;
  maxSteps?: number;
  retry?: RetryPolicy;
  contextWindow?: number;
  compactThreshold?: number;
  compaction?: { tailRatio?: number; summaryMaxTokens?: number };
  /** `false` leaves the repeat-call guard out; an object configures it. */
  repeatCall?: false | { thresholds?: number[]; exclude?: string[] };
  clock?: () => number;
  /** Subscribed before the session starts: it sees `session/start` and everything after. */
  subscribe?: SessionFeedListener;
  /** Leave the session created and not started (the test subscribes and starts it). */
  unstarted?: boolean;
}

/** The harness's shorthands as the product's terms: settings, a patch, services. */
export function harnessProduct(o: HarnessOptions): Pick<SessionOptions, 'settings' | 'patch'> & { services: NonNullable<SessionOptions['services']> } {
  const patch: PatchEntry[] = [...(o.patch ?? [])];
  if (o.repeatCall === false) patch.push({ id: 'guard:repeat-call', remove: true });
  else if (o.repeatCall) patch.push({ id: 'guard:repeat-call', use: 'repeat-call', config: o.repeatCall });
  if (o.maxSteps !== undefined) patch.push({ id: 'turn', use: 'limits', config: { maxSteps: o.maxSteps } });
  if (o.retry) patch.push({ id: 'recovery:retry', use: 'retry', config: o.retry });
  if (o.contextWindow !== undefined || o.compactThreshold !== undefined || o.compaction) {
    patch.push({ id: 'compaction', use: 'compaction', config: { ...(o.contextWindow !== undefined ? { window: o.contextWindow } : {}), ...(o.compactThreshold !== undefined ? { threshold: o.compactThreshold } : {}), ...(o.compaction ?? {}) } });
  }
  if (o.approval !== undefined || o.approvalRules || o.answerTimeoutMs !== undefined) {
    patch.push({
      id: 'approval',
      use: 'policy',
      config: { policy: o.approval ?? 'auto', rules: (o.approvalRules ?? []).map((r) => `${r.tool}:${r.pattern}`), ...(o.answerTimeoutMs !== undefined ? { answerTimeoutMs: o.answerTimeoutMs } : {}) },
    });
  }
  return {
    settings: { sandbox: 'off', ...(o.settings ?? {}) },
    patch,
    services: { ...(o.services ?? {}), ...(o.tools ? { tools: o.tools } : {}), ...(o.store ? { store: o.store } : {}), ...(o.clock ? { clock: o.clock } : {}) },
  };
}

export function createHarness(respond: ResponseFunction | ModelProvider, over: HarnessOptions = {}): Harness {
  const root = fs.realpathSync(tempDir('bridle-h-'));
  const workspace = path.join(root, 'ws');
  const bridleHome = path.join(root, 'home');
  fs.mkdirSync(workspace);
  fs.mkdirSync(bridleHome);
  const store = createMemoryStore();
  const requests: Harness['requests'] = [];
  let session: BridleSession | undefined;
  const inner = typeof respond === 'function' ? createScriptedProviderFromFunction(respond) : respond;
  const model: ModelProvider = {
    id: inner.id,
    ...(inner.reasoning !== undefined ? { reasoning: inner.reasoning } : {}),
    stream(request, signal) {
      requests.push({ request: { ...request, messages: structuredClone([...request.messages]) }, entries: session?.recorder.entries.length ?? 0 });
      return inner.stream(request, signal);
    },
  };
  const { tools: _t, store: given, approval, approvalRules: _r, answerTimeoutMs: _a, maxSteps: _m, retry: _re, contextWindow: _c, compactThreshold: _th, compaction: _co, repeatCall: _rc, clock, subscribe, unstarted, ...duties } = over;
  const product = harnessProduct({ ...over, approval: approval ?? 'auto' });
  // A continued log runs in the workspace it logged, as every host opens one (ADR 0041); a new one in its own.
  const cwd = over.cwd ?? (over.existing && over.existing.length > 0 ? loggedWorkspace(over.existing) : undefined) ?? workspace;
  session = createSession({
    id: 'test-session',
    cwd,
    bridleHome,
    sleep: async () => {},
    ...duties,
    ...product,
    services: { model: { ...model, name: 'scripted-test' }, store: given ?? store, clock: clock ?? steppingClock(), ...product.services },
  });
  if (subscribe) session.subscribe(subscribe);
  if (!unstarted) session.start();
  return {
    session,
    store: given && "lines" in given ? (given as MemoryStore) : store,
    workspace: cwd,
    bridleHome,
    requests,
    entries: () => session!.recorder.entries,
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** I1: every request's messages equal the projection of the log at its step/start. */
export function checkModelVisibleIsLogged(h: Harness): string[] {
  const problems: string[] = [];
  const all = h.entries();
  for (const [i, r] of h.requests.entries()) {
    const prefix = all.slice(0, r.entries);
    // A compaction's summary request: a prefix of the projection at that point, then the fixed instruction (ADR 0005).
    if (isSummaryInstruction(r.request.messages.at(-1))) {
      const replayed = r.request.messages.slice(0, -1);
      const want = deriveMessages(prefix).slice(0, replayed.length);
      const open = prefix.findLastIndex((e) => e.kind === 'compaction/start') > prefix.findLastIndex((e) => e.kind === 'compaction/end');
      if (!open || JSON.stringify(want) !== JSON.stringify(replayed)) problems.push(`request ${i + 1}: a summary request that does not replay the logged projection inside an open compaction`);
      continue;
    }
    let lastStart = -1;
    for (let j = prefix.length - 1; j >= 0; j--) if (prefix[j]!.kind === 'step/start') { lastStart = j; break; }
    const want = deriveMessages(all.slice(0, lastStart + 1));
    if (JSON.stringify(want) !== JSON.stringify(r.request.messages)) problems.push(`request ${i + 1}: messages differ from deriveMessages of the log at its step/start`);
  }
  return problems;
}
