/**
 * The stream deadlines as a user sets them: `--stream-idle-ms` and the
 * `streamIdleMs` config key reach the model provider of `bridle run`, and a
 * server that only sends keep-alive comments ends the turn as TIMEOUT
 * instead of hanging it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { type OpenAIServer, pause, raw, startOpenAIServer, type StreamItem, streamReply } from '../helpers/openai-sse-server.js';
import { textChunks } from '../helpers/openai-chunks.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { runCli } from '../helpers/cli.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-deadline-'));
});
afterEach(() => srv.close());

/** Some text, then keep-alive comments for a minute: a stream that never ends by itself. */
const pinging = (): StreamItem[] => [...textChunks('thinking', { finish: null }), ...Array.from({ length: 3000 }, () => [raw(': ping\n\n'), pause(20)]).flat()];

async function runAndCheck(args: string[]): Promise<void> {
  srv.enqueue(streamReply(pinging()));
  const t0 = performance.now();
  const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, ...args, 'go'], { env: { BRIDLE_HOME: home }, timeoutMs: 20_000 });
  expect(r.code).toBe(1);
  expect(performance.now() - t0).toBeLessThan(15_000);
  expect(r.stderr).toContain('the turn failed: TIMEOUT');
  const log = readSessionLog(home);
  const answer = log.find((e): e is EntryOf<'assistant/message'> => e.kind === 'assistant/message');
  expect(answer).toMatchObject({ blocks: [{ type: 'text', text: 'thinking' }], finish: { kind: 'error', code: 'TIMEOUT', message: 'no data from the model for 300 ms (streamIdleMs)' } });
  expect(log.filter((e) => e.kind === 'turn/end')).toMatchObject([{ reason: 'error', code: 'TIMEOUT' }]);
}

describe('model stream deadlines from the CLI', () => {
  it('--stream-idle-ms ends a stream of keep-alive comments as TIMEOUT', async () => {
    await runAndCheck(['--stream-idle-ms', '300']);
  });

  it('the streamIdleMs config key does the same', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.yaml'), 'streamIdleMs: 300\n');
    await runAndCheck([]);
  });
});
