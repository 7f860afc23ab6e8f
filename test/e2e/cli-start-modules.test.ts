/**
 * What a CLI start loads (ADR 0071, ADR 0070, ADR 0099): `bridle run --help` and a
 * scripted run load neither model SDK, no OpenTelemetry package and no
 * Postgres driver; `--help` loads the command table and nothing it does not
 * print; `replay` of a log file composes no product, so loads no adapter. Each module the process resolves is recorded by a module
 * hook (Node's `module.register`, given with `--import`), so the test reads
 * what was loaded rather than counting files.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const root = tempDir('bridle-start-modules-');
const hooks = join(root, 'hooks.mjs');
const register = join(root, 'register.mjs');
// The resolve hook runs on the hooks thread; it appends each resolved URL to the file named in `data`.
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(out, r.url + '\\n');
  return r;
}
`,
);
writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { out: process.env.BRIDLE_TEST_MODULES_OUT } });\n`);

/** The packages whose modules a start must not load: the SDKs load at a provider's first request, the optional peers at their feature's first use. */
const HEAVY = ['/node_modules/openai/', '/node_modules/@anthropic-ai/sdk/', '/node_modules/@opentelemetry/', '/node_modules/pg/'];
/** What only some commands use: the WebSocket package (serve, a process subagent, --inspect) and the YAML parser (a config or patch file). */
const FEATURE = ['/node_modules/ws/', '/node_modules/yaml/'];
/** The packages a URL is in, by name. */
const packagesOf = (urls: readonly string[]) => [...new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []))].sort();

async function loaded(name: string, args: string[]): Promise<string[]> {
  const out = join(root, `${name}.txt`);
  writeFileSync(out, '');
  const home = mkdtempSync(join(root, `${name}-home-`));
  const r = await runCli(args, { env: { BRIDLE_HOME: home, NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, BRIDLE_TEST_MODULES_OUT: out } });
  expect(r.code, r.stderr).toBe(0);
  return [...new Set(readFileSync(out, 'utf8').split('\n').filter(Boolean))];
}

describe('what a CLI start loads', () => {
  it('bridle run --help loads no model SDK, no OpenTelemetry package and no Postgres driver', async () => {
    const urls = await loaded('help', ['run', '--help']);
    // The hook saw the CLI itself: an empty list would pass for the wrong reason.
    expect(urls.some((u) => u.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/commander/'))).toBe(true);
    expect(urls.filter((u) => HEAVY.some((h) => u.includes(h)))).toEqual([]);
  });

  it('bridle --help and bridle run --help load commander and the command table: no package else, no adapter, no runtime', async () => {
    for (const [name, args] of [['root-help', ['--help']], ['run-help', ['run', '--help']]] as const) {
      const urls = await loaded(name, [...args]);
      expect(urls.some((u) => u.endsWith('/dist/cli/commands.js')), name).toBe(true);
      expect(packagesOf(urls), name).toEqual(['commander']);
      expect(urls.filter((u) => /\/dist\/(adapters|runtime|machines|tools)\//.test(u)), name).toEqual([]);
    }
  });

  it('bridle replay of a log file loads no adapter of the catalogue, no machine driver and neither ws nor yaml', async () => {
    const log = fileURLToPath(new URL('../golden/flaky-checkout.jsonl', import.meta.url));
    const urls = await loaded('replay', ['replay', log]);
    expect(urls.some((u) => u.endsWith('/dist/cli/replay.js'))).toBe(true);
    expect(urls.filter((u) => u.endsWith('/dist/runtime/catalogue.js') || u.includes('/dist/replay/') || u.includes('/dist/adapters/model/'))).toEqual([]);
    expect(urls.filter((u) => [...HEAVY, ...FEATURE].some((h) => u.includes(h)))).toEqual([]);
  });

  it('a scripted bridle run, start to end, loads neither model SDK, nor ws (it starts no child)', async () => {
    const ws = mkdtempSync(join(root, 'ws-'));
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'Nothing to do.' }] }));
    const urls = await loaded('run', ['run', '--cwd', ws, '--model', `scripted:${script}`, '--approval', 'never', '--sandbox', 'off', 'say hi']);
    expect(urls.some((u) => u.includes('/dist/adapters/model/'))).toBe(true);
    expect(urls.filter((u) => [...HEAVY, ...FEATURE].some((h) => u.includes(h)))).toEqual([]);
  });
});
