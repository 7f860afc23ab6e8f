/**
 * A relay's approval questions (ADR 0032): derived from the log it relays — an
 * `approval/asked` with no `approval/decided` — sent with the owner's params
 * after the entry, to a client that attaches while one is open, and never once
 * it is decided or its turn has ended. And the owner's live chunks, to the
 * clients that are live (ADR 0035).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Peer } from './attachment.js';
import type { Delta } from '../ports/relay.js';
import type { RelaySource } from '../ports/relay.js';
import { RelayedSession } from './relayed-session.js';

const lines: string[] = [];
let wake = () => undefined as void;
let live: (d: Delta) => void = () => undefined;
const source: RelaySource = {
  deltas: (fn) => ((live = fn), () => (live = () => undefined)),
  tail: async (fromSeq) => lines.filter((l) => (JSON.parse(l) as { seq: number }).seq >= fromSeq),
  subscribe: (w) => ((wake = w), () => undefined),
  forward: async () => 1,
  logged: async () => ({ seq: 0 }),
  present: (tool, args) => `${tool}: ${JSON.parse(args).command}`,
  ownerLive: async () => true,
  ownerGone: async () => false,
};
const log = (e: Record<string, unknown>) => lines.push(JSON.stringify({ seq: lines.length + 1, at: 'now', ...e }));

function peer(label: string) {
  const got: { method: string; params: any }[] = [];
  const p: Peer = { label, send: (t) => (got.push(JSON.parse(t)), true), room: async () => true };
  return { p, got, questions: () => got.filter((m) => m.method === 'approval/request').map((m) => m.params) };
}

let relay: RelayedSession | undefined;
afterEach(async () => {
  await relay?.close();
  lines.length = 0;
});

describe('a relay asks the approvals its log shows open', () => {
  it('asks after approval/asked with the owner\'s params, asks a client that attaches while it is open, and asks nothing once it is decided', async () => {
    log({ kind: 'session/start', cwd: '/w', model: 'm' });
    log({ kind: 'session/input', mode: 'followup', text: 'go' });
    log({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'x' }, { type: 'tool-call', id: 'a', name: 'read_file', arguments: '{"path":"p"}' }, { type: 'tool-call', id: 'b', name: 'bash', arguments: '{"command":"rm -r x"}' }] });
    log({ kind: 'approval/asked', turn: 't1', step: 't1.s1', callId: 't1.s1.c2', name: 'bash', reason: 'runs commands' });
    relay = new RelayedSession('s1', source, (m) => {
      throw new Error(m);
    }, () => undefined);
    const first = peer('client-1');
    await relay.attach(first.p, 1).start();
    await relay.pull();
    const want = { sessionId: 's1', callId: 't1.s1.c2', tool: 'bash', args: { command: 'rm -r x' }, reason: 'runs commands', presented: 'bash: rm -r x' };
    expect(first.questions()).toEqual([want]);
    // After the entry that asked it.
    const asked = first.got.findIndex((m) => m.method === 'session/entry' && m.params.entry.kind === 'approval/asked');
    expect(first.got.findIndex((m) => m.method === 'approval/request')).toBeGreaterThan(asked);
    const late = peer('client-2');
    await relay.attach(late.p, 3).start();
    expect(late.questions()).toEqual([want]);
    log({ kind: 'approval/decided', turn: 't1', step: 't1.s1', callId: 't1.s1.c2', outcome: 'allowed-once', by: 'ws:client-1' });
    wake();
    await relay.pull();
    const after = peer('client-3');
    await relay.attach(after.p, 1).start();
    expect(after.questions()).toEqual([]);
    expect(first.questions()).toHaveLength(1);
    expect(relay.openApprovals()).toEqual([]);
  });

  it('a question its turn ended without deciding is not asked', async () => {
    log({ kind: 'session/start', cwd: '/w', model: 'm' });
    log({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'tool-call', id: 'b', name: 'bash', arguments: '{"command":"ls"}' }] });
    log({ kind: 'approval/asked', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', reason: 'r' });
    log({ kind: 'turn/end', turn: 't1', reason: 'interrupted' });
    relay = new RelayedSession('s1', source, () => undefined, () => undefined);
    const c = peer('client-1');
    await relay.attach(c.p, 1).start();
    await relay.pull();
    expect(c.questions()).toEqual([]);
  });
});

describe('a relay hands on the owner\'s live chunks (ADR 0035)', () => {
  it('to each live client as session/delta, none of a step whose message the relay has read, and nothing once it is closed', async () => {
    log({ kind: 'session/start', cwd: '/w', model: 'm' });
    relay = new RelayedSession('s1', source, () => undefined, () => undefined);
    const chunk = { type: 'text-delta', index: 0, text: 'hel' } as const;
    live({ step: 't1.s1', chunk });
    const c = peer('client-1');
    await relay.attach(c.p, 1).start();
    live({ step: 't1.s1', chunk });
    live({ step: 't1.s1', chunk: { ...chunk, text: 'lo' } });
    const deltas = () => c.got.filter((m) => m.method === 'session/delta').map((m) => m.params);
    expect(deltas()).toEqual([
      { sessionId: 's1', step: 't1.s1', chunk },
      { sessionId: 's1', step: 't1.s1', chunk: { ...chunk, text: 'lo' } },
    ]);
    // Once the step's message is in the log, a chunk of it that comes late is stale: dropped; the next step's pass.
    log({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [{ type: 'text', text: 'hello' }] });
    wake();
    await relay.pull();
    live({ step: 't1.s1', chunk: { ...chunk, text: 'late' } });
    live({ step: 't1.s2', chunk: { ...chunk, text: 'next' } });
    expect(deltas().map((d) => d.chunk.text)).toEqual(['hel', 'lo', 'next']);
    await relay.close();
    live({ step: 't1.s3', chunk });
    expect(deltas()).toHaveLength(3);
  });
});
