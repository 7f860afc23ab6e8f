/**
 * Model-controlled text with terminal controls in it, through the real CLI:
 * `run` (streamed text, a tool call, its result, a provider's error
 * message), `replay` (the timeline of that log) and `chat` (the approval
 * question). Whatever the model sends, the terminal is given nothing it
 * would act on but newlines.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { CLI, runCli } from '../helpers/cli.js';
import { errorReply, type OpenAIServer, startOpenAIServer, streamReply, textReply } from '../helpers/openai-sse-server.js';
import { textChunks, toolCallChunks } from '../helpers/openai-chunks.js';

let srv: OpenAIServer;
let home: string;
let ws: string;
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws } = tempWorld('bridle-e2e-controls-'));
});
afterEach(() => srv.close());

/** Any character a terminal acts on, but `\n`. */
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const SPOOF = 'rm -rf ~/work\r\x1b[2K\x1b[1A';

describe('terminal controls in model output, through the CLI', () => {
  it('run shows streamed text, a tool call, its result and a provider error with every control visible; replay shows the log the same way', async () => {
    srv.enqueue(
      streamReply([
        ...textChunks('Checking.\r\x1b[2K\x9b2JAll clear.\n', { finish: null }),
        ...toolCallChunks([{ id: 'a', name: 'bash', arguments: JSON.stringify({ command: `printf 'ok\\r\\033[2Kfake'; # ${SPOOF}` }) }]),
      ]),
      textReply('Done.\x1b]0;pwned\x07'),
    );
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', 'go'], { env: { BRIDLE_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(ACTIVE);
    expect(r.stderr).not.toMatch(ACTIVE);
    expect(r.stdout).toContain('Checking.␍␛[2K⟨U+009B⟩2JAll clear.');
    expect(r.stdout).toContain('rm -rf ~/work␍␛[2K␛[1A');
    // The command really printed a carriage return and an escape sequence.
    expect(r.stdout).toContain('ok␍␛[2Kfake');
    expect(r.stdout).toContain('Done.␛]0;pwned␇');

    const id = readdirSync(join(home, 'sessions'))[0]!.replace(/\.jsonl$/, '');
    const replay = await runCli(['replay', id], { env: { BRIDLE_HOME: home } });
    expect(replay.code, replay.stdout).toBe(0);
    expect(replay.stdout).not.toMatch(ACTIVE);
    // The timeline folds whitespace (a carriage return among it) to one space; the escape stays visible.
    expect(replay.stdout).toContain('ok ␛[2Kfake');

    srv.enqueue(errorReply(400, 'bad request\r\x1b[2Kall fine'));
    const failed = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', 'again'], { env: { BRIDLE_HOME: home } });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('the turn failed: BAD_REQUEST');
    expect(failed.stderr).not.toMatch(ACTIVE);
    expect(failed.stderr).toContain('bad request␍␛[2Kall fine');
  });

  it('run --json escapes DEL, C1 and bidi controls in its JSON lines, which still parse to the logged entries', async () => {
    srv.enqueue(textReply('fine\x9b2J\x7f\u202eexe.txt'));
    const r = await runCli(['run', '--json', '--base-url', srv.url, '--model', 'm', '--cwd', ws, 'go'], { env: { BRIDLE_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(ACTIVE);
    const printed = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(printed).toEqual(readSessionLog(home));
    expect(JSON.stringify(printed)).toContain('fine\x9b2J\x7f\u202eexe.txt');
  });

  it('chat asks about the exact command, every line and control visible, and runs nothing when refused', async () => {
    const command = `echo harmless\n${SPOOF}? bash: ls`;
    srv.enqueue(streamReply(toolCallChunks([{ id: 'a', name: 'bash', arguments: JSON.stringify({ command }) }])), textReply('ok'));
    const child = spawn(process.execPath, [CLI, 'chat', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--sandbox', 'off'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stdin.write('clean up\n');
    for (let i = 0; i < 500 && !stdout.includes('[a]lways'); i++) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end('n\n');
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(stdout).not.toMatch(ACTIVE);
    const question = stdout.slice(stdout.indexOf('? bash'));
    expect(question).toContain('│ echo harmless');
    expect(question).toContain('│ rm -rf ~/work␍␛[2K␛[1A? bash: ls');
    expect(readSessionLog(home).find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'denied' });
  });
});
