/**
 * `--inspect`: a demo-like run (the flaky-checkout project, a scripted model
 * that lists, reads, edits and runs a command) reports every actor — session,
 * turn, steps, tool calls — to a local WebSocket endpoint, in the Stately
 * inspector's message format. The endpoint is a `ws` server in this test.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectUrl, openInspector, withInspector } from '../../cli/inspect.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
let wss: WebSocketServer | undefined;
afterEach(async () => {
  h?.cleanup();
  await new Promise<void>((r) => (wss ? wss.close(() => r()) : r()));
  wss = undefined;
});

const project = fileURLToPath(new URL('../../examples/flaky-checkout/project/', import.meta.url));

function listen(): Promise<{ url: string; frames: string[] }> {
  const frames: string[] = [];
  return new Promise((resolve) => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = wss!.address() as { port: number };
      resolve({ url: `ws://127.0.0.1:${port}`, frames });
    });
    wss.on('connection', (ws) => ws.on('message', (d) => frames.push(d.toString())));
  });
}

describe('inspection', () => {
  it("reports every actor of a demo-like run to a WebSocket inspector, in the inspector's format", async () => {
    const { url, frames } = await listen();
    const inspector = await openInspector(url);
    h = createHarness(
      (_req, i) =>
        [
          { text: 'Looking around.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }, { name: 'read_file', arguments: { path: 'test/checkout.test.js' } }] },
          { text: 'Fixing the hook.', toolCalls: [{ name: 'edit_file', arguments: { path: 'test/checkout.test.js', old_text: 'beforeEach(() => {', new_text: 'beforeEach(async () => {' } }] },
          { toolCalls: [{ name: 'bash', arguments: { command: 'echo checked' } }] },
          { text: 'Done: the hook now waits.' },
        ][i],
      { inspect: inspector.inspect },
    );
    cpSync(project, h.workspace, { recursive: true });
    const out = await h.session.run('find out why this test is flaky and fix it');
    expect(out.reason).toBe('completed');
    await inspector.close();

    const events = frames.map((f) => JSON.parse(f) as Record<string, any>);
    expect(events.length).toBeGreaterThan(50);
    for (const e of events) {
      expect(['@xstate.actor', '@xstate.event', '@xstate.snapshot']).toContain(e.type);
      expect(e).toMatchObject({ _version: expect.any(String), sessionId: expect.any(String), createdAt: expect.any(String) });
    }
    // Every machine actor registered, each with its machine definition (promise actors have none).
    const actors = events.filter((e) => e.type === '@xstate.actor');
    const machineOf = (e: Record<string, any>) => (e.definition ? (JSON.parse(e.definition) as { id: string }).id : undefined);
    const count = (m: string) => actors.filter((e) => machineOf(e) === m).length;
    expect([count('session'), count('turn'), count('step'), count('tool-call')]).toEqual([1, 1, 4, 4]);
    expect(actors.filter((e) => machineOf(e) === 'tool-call').map((e) => e.name)).toEqual(['t1.s1.c1', 't1.s1.c2', 't1.s2.c1', 't1.s3.c1']);
    const session = actors.find((e) => e.name === 'session')!;
    // Children point at their parents; snapshots carry state values.
    const turn = actors.find((e) => e.name === 'turn')!;
    expect(turn.parentId).toBe(session.sessionId);
    const snapshots = events.filter((e) => e.type === '@xstate.snapshot' && e.sessionId === session.sessionId);
    expect(snapshots.map((e) => JSON.stringify(e.snapshot.value))).toEqual(expect.arrayContaining(['{"running":"active"}', '"idle"']));
    expect(events.some((e) => e.type === '@xstate.event' && e.event.type === 'session.input.received')).toBe(true);
  });

  it('says clearly when no inspector listens, and parses the flag', async () => {
    await expect(openInspector('ws://127.0.0.1:9')).rejects.toThrow(/no inspector listening at ws:\/\/127\.0\.0\.1:9/);
    expect(inspectUrl(undefined)).toBeUndefined();
    expect(inspectUrl(true)).toBe('ws://localhost:8080');
    expect(inspectUrl('ws://127.0.0.1:1234')).toBe('ws://127.0.0.1:1234');
    expect(() => inspectUrl('http://x')).toThrow(/ws:\/\//);
    const { url, frames } = await listen();
    expect(await withInspector(url, async (inspect) => (inspect ? 'on' : 'off'))).toBe('on');
    expect(await withInspector(undefined, async (inspect) => (inspect ? 'on' : 'off'))).toBe('off');
    expect(frames).toEqual([]);
  });
});
