/** `bridle chat` as a user runs it, against a local OpenAI-wire server: prompts line by line, `/compact`, Ctrl-C, end of input. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SUMMARY_REQUEST_MARK } from '../../log/context/summary-prompt.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { CLI, runCli } from '../helpers/cli.js';
import { type OpenAIServer, pause, startOpenAIServer, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks } from '../helpers/openai-chunks.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-e2e-chat-'));
});
afterEach(() => srv.close());

const readLog = (): Entry[] => readSessionLog(home);
const isSummaryRequest = (body: { messages: { role: string; content?: unknown }[] }) => {
  const last = body.messages.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith(SUMMARY_REQUEST_MARK);
};

describe('bridle chat', () => {
  it('lines are prompts, /compact compacts between turns, end of input exits 0', async () => {
    writeFileSync(join(ws, 'notes.txt'), Array.from({ length: 200 }, (_, i) => `note ${i}: remember this`).join('\n'));
    srv.respondWith((body) => {
      if (isSummaryRequest(body)) return streamReply([...textChunks('## Request and intent\nread notes\n## Key facts\n200 notes\n## Files touched\nnotes.txt\n## Errors and fixes\nnone\n## Current work\nnone\n## Next step\nwait')]);
      const last = body.messages.at(-1);
      if (last.role === 'user') return streamReply(toolCallChunks([{ id: `c${srv.requests.length}`, name: 'read_file', arguments: '{"path":"notes.txt"}' }]));
      return streamReply(textChunks(`Read ${body.messages.length} messages.`));
    });
    const r = await runCli(['chat', '--base-url', srv.url, '--model', 'test-model', '--cwd', ws, '--approval', 'auto'], {
      env: { BRIDLE_HOME: home },
      input: 'first\nsecond\n/compact\n/context\nthird\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/compaction compacted: \d+ → \d+ tokens/);
    expect(r.stdout).toMatch(/context: \d+ tokens/);
    const log = readLog();
    expect(log.filter((e) => e.kind === 'turn/start').map((e) => (e as EntryOf<'turn/start'>).input)).toEqual(['first', 'second', 'third']);
    const kinds = log.map((e) => e.kind);
    // Between turns: right after the second turn's end and checkpoint, before the third turn.
    const at = kinds.indexOf('compaction/start');
    expect(kinds.slice(at - 2, at)).toEqual(['turn/end', 'checkpoint']);
    expect(kinds.indexOf('turn/start', at)).toBeGreaterThan(kinds.indexOf('compaction/end'));
    expect(log.find((e) => e.kind === 'compaction/start')).toMatchObject({ trigger: 'manual' });
    expect(verifyLog(log).violations).toEqual([]);
  });

  it('Ctrl-C cancels the running turn, and the chat goes on', async () => {
    srv.respondWith((body) => (body.messages.at(-1).content === 'slow' ? streamReply([...textChunks('thinking '), pause(10_000), ...textChunks('never')]) : streamReply(textChunks('quick answer'))));
    const child = spawn(process.execPath, [CLI, 'chat', '--base-url', srv.url, '--model', 'test-model', '--cwd', ws], { env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
    };
    child.stdin.write('slow\n');
    await until(() => stdout.includes('thinking'));
    child.kill('SIGINT');
    await until(() => stdout.includes('ended: aborted'));
    child.stdin.end('fast\n');
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(stderr).toContain('cancelling…');
    expect(code).toBe(0);
    expect(stdout).toMatch(/turn t1 ended: aborted/);
    expect(stdout).toContain('quick answer');
    expect(verifyLog(readLog()).violations).toEqual([]);
  });
});
