/**
 * The MCP project's conformance suite (`@modelcontextprotocol/conformance`,
 * a development dependency, run from node_modules, offline) against
 * bridle's MCP client: each client scenario below, one at a time (the suite
 * runs its servers on loopback on ports it picks), with bridle's driver
 * (`test/helpers/mcp-conformance-client.ts`, compiled: `npm run build`
 * first) and the expected-failures file, which names only what bridle
 * deliberately does not do, each with its reason. The suite exits non-zero
 * on an unexpected failure and on a stale entry (a listed scenario that
 * passes). It needs Node 22's `fs.globSync` at load, which it does not use
 * for client scenarios: on Node 20 it runs with `node20.mjs`'s hook (ADR 0054).
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FIXTURE, requireFixture } from '../helpers/mcp-fixture.js';
import { tempDir } from '../helpers/temp.js';

const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const HOOK = fileURLToPath(new URL('./node20.mjs', import.meta.url));
const EXPECTED = fileURLToPath(new URL('./mcp-client-expected-failures.yml', import.meta.url));
const DRIVER = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-conformance-client.js');

/** Every client scenario of the 2026-07-28 revision and the 2025 ones bridle speaks, but OAuth's (two stand for them). */
const SCENARIOS = [
  'initialize',
  'tools_call',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'sse-retry',
  'sep-2322-client-request-state',
  'elicitation-sep1034-client-defaults',
  'auth/metadata-default',
  'auth/token-endpoint-auth-basic',
];

let out: string;
beforeAll(() => {
  requireFixture();
  out = tempDir('bridle-conformance-');
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

function run(scenario: string): Promise<{ code: number; output: string }> {
  const args = [HOOK].flatMap((h) => ['--import', h]).concat([SUITE, 'client', '--command', `${process.execPath} ${DRIVER}`, '--scenario', scenario, '--expected-failures', EXPECTED, '-o', out]);
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: out, timeout: 90_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe('the MCP conformance suite against bridle\'s client', () => {
  it('the expected-failures file lists only scenarios this test runs, so a stale entry is caught', () => {
    const listed = (parse(readFileSync(EXPECTED, 'utf8')) as { client: string[] }).client;
    expect(listed.length).toBeGreaterThan(0);
    for (const s of listed) expect(SCENARIOS).toContain(s);
  });

  for (const scenario of SCENARIOS) {
    it(`client scenario ${scenario}: passes, or fails as the expected-failures file says`, async () => {
      const r = await run(scenario);
      expect(r.code, r.output.slice(-3000)).toBe(0);
    }, 120_000);
  }
});
