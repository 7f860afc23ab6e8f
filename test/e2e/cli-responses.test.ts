/**
 * `bridle run --provider openai-responses` as a user runs it, against a local server speaking the Responses
 * wire, through the real openai SDK: a three-step tool turn whose reasoning items go back to the server
 * exactly as received, a log that replays byte for byte, and requests that only ever grow (ADR 0044).
 * Never run against the live endpoint.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-sse-server.js';
import { callEvents, completed, reasoningEvents, reasoningItem, responsesDrop, responsesReply, textEvents } from '../helpers/responses-events.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-responses-'));
  writeFileSync(join(ws, 'notes.txt'), 'alpha\nbeta\n');
});
afterEach(() => srv.close());

const run = (args: string[]) => runCli(['run', '--provider', 'openai-responses', '--base-url', srv.url, '--model', 'gpt-test', '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', ...args], { env: { BRIDLE_HOME: home } });

const first = reasoningItem('rs_1', ['**Looking around**', 'List, then read.'], 'gAAAAB-first-step-opaque==');
const second = reasoningItem('rs_2', ['**Reading**'], 'gAAAAB-second-step-opaque==');
/** The raw request bodies the server received for `/v1/responses`, as text. */
const bodies = () => srv.requests.filter((q) => q.path === '/v1/responses').map((q) => q.body);

describe('bridle run --provider openai-responses', () => {
  it("a three-step tool turn: each later request carries the earlier steps' reasoning items byte-identical to what was received; the log replays byte for byte", async () => {
    srv.enqueue(
      responsesReply([...reasoningEvents(0, first), ...callEvents(1, [{ call_id: 'call_a', name: 'list_dir', arguments: '{}' }, { call_id: 'call_b', name: 'read_file', arguments: '{"path":"notes.txt"}' }], true), completed({ input_tokens: 300, output_tokens: 40, reasoning_tokens: 25 })]),
      responsesReply([...reasoningEvents(0, second), ...textEvents(1, 'Writing the summary.'), ...callEvents(2, [{ call_id: 'call_c', name: 'write_file', arguments: '{"path":"out.txt","content":"alpha, beta\\n"}' }]), completed({ input_tokens: 420, output_tokens: 30, cached_tokens: 256 })]),
      responsesReply([...textEvents(0, 'All done.'), completed({ input_tokens: 480, output_tokens: 5, cached_tokens: 384 })]),
    );
    const r = await run(['summarize notes']);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('All done.');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('alpha, beta\n');

    const [b1, b2, b3] = bodies();
    expect(bodies()).toHaveLength(3);
    const log = readSessionLog(home);
    const id = (log[0] as EntryOf<'session/start'>).id;
    for (const b of [b1, b2, b3]) expect(b).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], prompt_cache_key: id, stream: true });
    // The second request: the first step's reasoning item, byte for byte, right before its function calls and their outputs.
    const at = b2.input.findIndex((i: { type?: string }) => i.type === 'reasoning');
    expect(JSON.stringify(b2.input[at])).toBe(JSON.stringify(first));
    expect(b2.input.slice(at + 1).map((i: { type?: string; call_id?: string }) => `${i.type}:${i.call_id}`)).toEqual(['function_call:call_a', 'function_call:call_b', 'function_call_output:call_a', 'function_call_output:call_b']);
    // The third: both steps' items, each before its own step's items.
    expect(b3.input.filter((i: { type?: string }) => i.type === 'reasoning').map((i: unknown) => JSON.stringify(i))).toEqual([JSON.stringify(first), JSON.stringify(second)]);
    expect(b3.input.map((i: { type?: string; role?: string }) => i.type ?? i.role)).toEqual(['user', 'reasoning', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'reasoning', 'assistant', 'function_call', 'function_call_output']);
    // Append-only: each request's input is the previous one's, then more.
    expect(b2.input.slice(0, b1.input.length)).toEqual(b1.input);
    expect(b3.input.slice(0, b2.input.length)).toEqual(b2.input);
    expect(b3.instructions).toBe(b1.instructions);
    expect(b3.tools).toEqual(b1.tools);

    // The log: the items as received, the header naming the wire, usage with cached input.
    const answers = log.filter((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');
    expect(answers[0]!.blocks[0]).toEqual({ type: 'reasoning', text: '**Looking around**\n\nList, then read.', provider: 'openai-responses', data: first });
    expect(answers[1]!.usage).toEqual({ inputTokens: 420, outputTokens: 30, reasoningTokens: 0, cachedTokens: 256 });
    expect(log.find((e) => e.kind === 'request/header')).toMatchObject({ params: { model: 'gpt-test', reasoning: 'openai-responses' } });

    const replay = await runCli(['replay', id, '--json'], { env: { BRIDLE_HOME: home } });
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toMatchObject({ ok: true, violations: [] });
    expect(replay.code).toBe(0);
  });

  it('a stream cut before response.completed is TRANSPORT, retried, and never taken for success (I8)', async () => {
    const cut = responsesDrop([...reasoningEvents(0, first), ...textEvents(1, 'half an answer').slice(0, 3)]);
    srv.enqueue(cut, cut, cut, cut);
    const r = await run(['hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the turn failed: TRANSPORT/);
    const log = readSessionLog(home);
    expect(log.filter((e) => e.kind === 'model/retry')).toHaveLength(3);
    expect(log.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'error', code: 'TRANSPORT' });
  });

  it('a session resumed on another wire drops the foreign reasoning from its requests and its header says how many', async () => {
    srv.enqueue(responsesReply([...reasoningEvents(0, first), ...textEvents(1, 'First.'), completed()]));
    expect((await run(['one'])).code).toBe(0);
    const id = (readSessionLog(home)[0] as EntryOf<'session/start'>).id;
    // The same session, now over chat completions: the Responses item cannot go there.
    srv.enqueue({ type: 'stream', chunks: [{ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Second.' }, finish_reason: 'stop' }] }] });
    const again = await runCli(['resume', id, 'two', '--provider', 'openai-chat', '--base-url', srv.url, '--model', 'gpt-test', '--cwd', ws, '--approval', 'auto', '--sandbox', 'off'], { env: { BRIDLE_HOME: home } });
    expect(again.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(again.code).toBe(0);
    const chat = srv.requests.at(-1)!;
    expect(chat.path).toBe('/v1/chat/completions');
    expect(JSON.stringify(chat.body)).not.toContain('gAAAAB');
    const headers = readSessionLog(home).filter((e): e is EntryOf<'request/header'> => e.kind === 'request/header');
    expect(headers.map((h) => [h.params.reasoning, h.droppedReasoning])).toEqual([['openai-responses', undefined], [undefined, 1]]);
    const replay = await runCli(['replay', id, '--json'], { env: { BRIDLE_HOME: home } });
    expect(JSON.parse(replay.stdout)).toMatchObject({ ok: true, violations: [] });
  });
});
