/**
 * `bridle mcp` driven by the MCP inspector's CLI mode
 * (`@modelcontextprotocol/inspector-cli`, a development dependency: the
 * official inspector's headless client, on the v1 SDK, so a 2025 connection
 * over stdio) against the built CLI: `tools/list` shows `bridle_run`,
 * `tools/call` runs a scripted session and returns its answer, and
 * `resources/list` shows that session's log. A missing inspector fails
 * these tests (it is installed with the rest), never skips them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const INSPECTOR = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js');

/** One inspector call: `--method …` against `bridle mcp …`; its stdout parsed (the inspector prints the result as JSON). */
function inspect(method: string[], mcpArgs: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  // The inspector reads its own package.json at `../package.json` from its working directory: run it in its build folder.
  const child = spawn(process.execPath, [INSPECTOR, process.execPath, CLI, ...method, '--', 'mcp', ...mcpArgs], { cwd: dirname(INSPECTOR), env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`inspector ${method.join(' ')} exited ${code}:\n${out}\n${err}`))));
  });
}

describe('bridle mcp through the MCP inspector CLI', () => {
  it('tools/list shows bridle_run; tools/call runs a scripted session and returns its answer; resources/list shows its log', async () => {
    const root = realpathSync(tempDir('bridle-mcp-inspector-'));
    const ws = join(root, 'ws');
    mkdirSync(ws);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ label: 'scripted: one answer', responses: [{ text: 'Hello from bridle.' }] }));
    const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, BRIDLE_HOME: join(root, 'home') };
    const args = ['--model', `scripted:${script}`, '--cwd', ws, '--sandbox', 'off'];

    const tools = (await inspect(['--method', 'tools/list'], args, env)) as { tools: { name: string }[] };
    expect(tools.tools.map((t) => t.name)).toEqual(['bridle_run']);

    const call = (await inspect(['--method', 'tools/call', '--tool-name', 'bridle_run', '--tool-arg', 'prompt=Say hello.'], args, env)) as { isError?: boolean; structuredContent: { sessionId: string; reason: string; answer: string } };
    expect(call.isError).toBeFalsy();
    expect(call.structuredContent).toMatchObject({ reason: 'completed', answer: 'Hello from bridle.' });

    const listed = (await inspect(['--method', 'resources/list'], args, env)) as { resources: { uri: string }[] };
    expect(listed.resources.map((r) => r.uri)).toContain(`bridle://sessions/${call.structuredContent.sessionId}/log`);
  }, 90_000);
});
