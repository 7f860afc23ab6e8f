/**
 * A whole session for tests: memory store, a stepping clock, a reactive
 * scripted model that records every request, the real built-in tools in a
 * temp workspace. Nothing here reaches the network.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelProvider } from '../../ports/model.js';
import { createSession, type BridleSession, type SessionOptions } from '../../runtime/session.js';
import { createScriptedProviderFromFunction, type ResponseFunction } from '../../adapters/model/scripted.js';
import { createOffSandbox } from '../../adapters/sandbox/off.js';
import { createLocalSubprocess } from '../../adapters/subprocess/local.js';
import { createMemoryStore, type MemoryStore } from '../../adapters/store/memory.js';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { builtinTools } from '../../tools/index.js';

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

export function createHarness(respond: ResponseFunction | ModelProvider, over: Partial<SessionOptions> = {}): Harness {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-h-')));
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
    stream(request, signal) {
      requests.push({ request: { ...request, messages: structuredClone([...request.messages]) }, entries: session?.recorder.entries.length ?? 0 });
      return inner.stream(request, signal);
    },
  };
  session = createSession({
    id: 'test-session',
    cwd: workspace,
    bridleHome,
    model,
    modelName: 'scripted-test',
    store,
    clock: steppingClock(),
    tools: builtinTools(),
    // Commands run unconfined here, as asked: the tests' workspace is a throwaway temp directory.
    subprocess: createLocalSubprocess({ sandbox: createOffSandbox(), policy: { mode: 'full', workspace, network: true } }),
    approval: 'auto',
    sleep: async () => {},
    ...over,
  });
  return {
    session,
    store,
    workspace,
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
