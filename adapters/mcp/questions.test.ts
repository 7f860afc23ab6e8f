/**
 * A server that asks during its calls (ADR 0065), in both revisions: on
 * 2026-07-28 its input requests come embedded in `input_required` results,
 * on 2025 as `elicitation/create` requests; either way the call's `ask` gets
 * one bridle question, and its answer reaches the server. A form bridle
 * cannot show is handed on as `unshowable`. Progress reaches `progress`;
 * the session's trace context reaches a stdio server as `TRACEPARENT` and
 * each call's as `_meta.traceparent`. Compiled servers: `npm run build` first.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import type { ToolAnswer, ToolProgress, ToolQuestion } from '../../ports/tools.js';
import { McpConfig } from './config.js';
import { connectMcp, type McpConnection } from './connection.js';
import type { McpCallContext } from './tools.js';
import { tempDir } from '../../test/helpers/temp.js';

const ASKING = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-asking-server.js');
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const SESSION_TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const CALL_TRACE = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';

let ws: string;
const opened: McpConnection[] = [];
beforeAll(() => {
  requireFixture();
  ws = tempDir('bridle-mcp-ask-');
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
  rmSync(ws, { recursive: true, force: true });
});

const open = async (args: string[], traceparent?: string) => {
  const c = await connectMcp(McpConfig.parse({ command: process.execPath, args }), { id: 'mcp:ask', cwd: ws, signal: new AbortController().signal, ...(traceparent ? { traceparent } : {}) });
  opened.push(c);
  return c;
};

/** A call context that records what it was asked and told, answering with `answer`. */
function recording(answer: (q: ToolQuestion) => ToolAnswer) {
  const questions: ToolQuestion[] = [];
  const reports: ToolProgress[] = [];
  const ctx: McpCallContext = {
    ask: async (q) => (questions.push(q), answer(q)),
    progress: (p) => void reports.push(p),
    traceparent: CALL_TRACE,
  };
  return { ctx, questions, reports };
}

const signal = () => new AbortController().signal;

describe.each([
  ['2026-07-28 (input_required results)', [] as string[], '2026-07-28'],
  ['2025 (elicitation/create requests)', ['--legacy'], '2025-11-25'],
])('a server that asks during a call, in %s', (_name, extra, revision) => {
  let c: McpConnection;
  beforeAll(async () => void (c = await open([ASKING, ...extra], SESSION_TRACE)));

  it('asks one bridle question with the form as flat fields, and the server gets the values', async () => {
    expect(c.protocolVersion).toBe(revision);
    const r = recording(() => ({ action: 'accepted', values: { confirm: true, note: 'friday' } }));
    expect(await c.call('deploy', { env: 'prod' }, signal(), r.ctx)).toEqual({ status: 'ok', content: 'deployed to prod (friday)' });
    expect(r.questions).toEqual([
      {
        from: 'mcp:ask',
        message: 'Deploy to prod?',
        fields: [
          { name: 'confirm', type: 'boolean', required: true, title: 'Deploy now?' },
          { name: 'note', type: 'string', required: false, description: 'A note for the release' },
        ],
      },
    ]);
  });

  it('a declined question reaches the server as decline', async () => {
    const r = recording(() => ({ action: 'declined', reason: 'approval policy never' }));
    expect(await c.call('deploy', { env: 'prod' }, signal(), r.ctx)).toEqual({ status: 'ok', content: 'not deployed: decline' });
  });

  it('a multiple choice is handed on as a form bridle cannot show', async () => {
    const r = recording(() => ({ action: 'declined', reason: 'cannot show' }));
    expect(await c.call('pick', {}, signal(), r.ctx)).toEqual({ status: 'ok', content: 'picked: decline' });
    expect(r.questions).toEqual([{ from: 'mcp:ask', message: 'Which fish?', unshowable: 'the field fish is a multiple choice' }]);
  });

  it('a call without anyone to ask is declined', async () => {
    expect(await c.call('deploy', { env: 'prod' }, signal())).toEqual({ status: 'ok', content: 'not deployed: decline' });
  });

  it('sends a progress token: every report reaches the call, in order', async () => {
    const r = recording(() => ({ action: 'cancelled' }));
    expect(await c.call('slow', {}, signal(), r.ctx)).toEqual({ status: 'ok', content: 'done' });
    expect(r.reports).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
  });

  it('passes the session\'s trace context as TRACEPARENT and the call\'s in _meta.traceparent', async () => {
    const r = recording(() => ({ action: 'cancelled' }));
    expect(JSON.parse((await c.call('trace', {}, signal(), r.ctx)).content)).toEqual({ env: SESSION_TRACE, meta: CALL_TRACE });
  });
});

it('a server of a session without a trace context gets neither', async () => {
  const c = await open([ASKING]);
  expect(JSON.parse((await c.call('trace', {}, signal())).content)).toEqual({ env: null, meta: null });
});

describe('the reference server-everything', () => {
  let c: McpConnection;
  beforeAll(async () => void (c = await open([EVERYTHING, 'stdio'])));

  it('its elicitation tool asks a form with multiple choices: handed on as unshowable, and the decline reaches it', async () => {
    expect(c.tools.map((t) => t.name)).toContain('trigger-elicitation-request');
    const r = recording(() => ({ action: 'declined', reason: 'cannot show' }));
    const out = await c.call('trigger-elicitation-request', {}, signal(), r.ctx);
    expect(r.questions).toEqual([{ from: 'mcp:ask', message: 'Please provide inputs for the following fields:', unshowable: expect.stringMatching(/multiple choice/) }]);
    expect(out.content).toMatch(/declined/i);
  });

  it('its long-running operation reports each step', async () => {
    const r = recording(() => ({ action: 'cancelled' }));
    const out = await c.call('trigger-long-running-operation', { duration: 0.2, steps: 3 }, signal(), r.ctx);
    expect(out.status).toBe('ok');
    expect(r.reports.map((p) => [p.progress, p.total])).toEqual([[1, 3], [2, 3], [3, 3]]);
  });
});
