/**
 * Compaction as a user meets it: `bridle run --context-window 16000` drives a
 * long, tool-heavy turn against a local OpenAI-wire server that reports
 * usage the way a real one does. No request it receives is over the window;
 * the log holds the compaction brackets, the replacements, and every entry.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SUMMARY_REQUEST_MARK } from '../../log/context/summary-prompt.js';
import { codePoints, tokensOfChars } from '../../log/context/tokens.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';
import { type OpenAIServer, startOpenAIServer, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks, usageChunk } from '../helpers/openai-chunks.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-e2e-compact-'));
});
afterEach(() => srv.close());

const readLog = (): Entry[] => readSessionLog(home);

/** The request as the server received it, sized the way bridle sizes one (code points / 4). */
const wireTokens = (body: { messages: unknown[]; tools?: unknown[] }) => tokensOfChars(codePoints(JSON.stringify(body.messages)) + codePoints(JSON.stringify(body.tools ?? [])));
const isSummaryRequest = (body: { messages: { role: string; content?: unknown }[] }) => {
  const last = body.messages.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith(SUMMARY_REQUEST_MARK);
};

describe('compaction end to end', () => {
  it('a long tool-heavy turn with --context-window 16000 never sends a request over the window and logs the brackets', async () => {
    writeFileSync(join(ws, 'data.txt'), Array.from({ length: 400 }, (_, i) => `record ${i}: ${'value '.repeat(8)}`).join('\n'));
    writeFileSync(join(ws, 'huge.txt'), Array.from({ length: 3000 }, (_, i) => `huge line ${i}`).join('\n'));
    const STEPS = 60;
    let steps = 0;
    srv.respondWith((body) => {
      const usage = usageChunk({ prompt_tokens: wireTokens(body), completion_tokens: 20 });
      if (isSummaryRequest(body)) {
        return streamReply([...textChunks('## Request and intent\nread data.txt\n## Key facts\nrecords are uniform\n## Files touched\ndata.txt, huge.txt\n## Errors and fixes\nnone\n## Current work\nreading\n## Next step\nread on'), usage]);
      }
      steps++;
      if (steps > STEPS) return streamReply([...textChunks('Read everything.'), usage]);
      const args = steps === 5 ? { path: 'huge.txt' } : { path: 'data.txt', offset: ((steps * 37) % 360) + 1, limit: 40 };
      return streamReply([...toolCallChunks([{ id: `call_${steps}`, name: 'read_file', arguments: JSON.stringify(args) }]), usage]);
    });
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'test-model', '--cwd', ws, '--approval', 'auto', '--max-steps', '100', '--context-window', '16000', 'read data.txt in pieces'], {
      env: { BRIDLE_HOME: home },
      timeoutMs: 120_000,
    });
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Read everything.');
    expect(r.stdout).toMatch(/context compaction compacted/);

    const sizes = srv.requests.map((q) => wireTokens(q.body));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16_000);
    expect(srv.requests.filter((q) => isSummaryRequest(q.body)).length).toBeGreaterThan(0);

    const log = readLog();
    const starts = log.filter((e): e is EntryOf<'compaction/start'> => e.kind === 'compaction/start');
    const ends = log.filter((e): e is EntryOf<'compaction/end'> => e.kind === 'compaction/end');
    expect(starts.length).toBeGreaterThan(0);
    expect(ends).toHaveLength(starts.length);
    expect(starts.every((s) => s.window === 16_000)).toBe(true);
    expect(log.some((e) => e.kind === 'compaction/summary')).toBe(true);
    expect(log.some((e) => e.kind === 'user/message' && e.origin === 'summary' && e.surfaceOp !== 'append')).toBe(true);
    // The huge result was pruned by a logged replacement; the original is still in the log, whole.
    const huge = log.find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.content.includes('huge line 1999') && e.surfaceOp === 'append');
    expect(huge).toBeDefined();
    expect(log.some((e) => e.kind === 'tool/result' && e.callId === huge!.callId && e.surfaceOp !== 'append' && e.content.includes('bridle cut'))).toBe(true);
    expect(log.filter((e) => e.kind === 'tool/result' && e.surfaceOp === 'append')).toHaveLength(STEPS);
    expect(verifyLog(log).violations).toEqual([]);
  }, 150_000);
});
