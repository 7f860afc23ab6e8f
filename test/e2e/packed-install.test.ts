/**
 * The package as a user installs it: `npm pack`, then `npm install` of the
 * tarball into a new project outside the repository (the runtime dependencies
 * come from npm's cache or the registry, as a user's do). In it: the README's
 * embedding example, taken from the README itself, type-checks against the
 * installed types (strict, NodeNext) and runs against a local
 * OpenAI-compatible server; `npx bridle --version`; `npm start` of the
 * installed package (the demo), and a replay page from the viewer it ships.
 *
 * Packs with `--ignore-scripts`: `prepack` would rebuild `dist/` under the
 * e2e tests running beside this one; `npm test` has just built it.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesOnDisk, installedPackages } from '../helpers/installed.js';
import { runCommand, userEnv } from '../helpers/npm.js';
import { startOpenAIServer, textReply, toolCallReply, type OpenAIServer } from '../helpers/openai-sse-server.js';
import { tempDir } from '../helpers/temp.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string> };
const root = realpathSync(tempDir('bridle-packed-'));
const project = join(root, 'project');
let files: string[] = [];

/** The README's `## Embedding` example: the first ts block of that section. */
function embeddingExample(readme: string): string {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Embedding\n'));
  const code = section && /```ts\n([\s\S]*?)```/.exec(section);
  if (!code) throw new Error('README.md has no ts block under "## Embedding"');
  return code[1]!;
}

beforeAll(async () => {
  const packed = await runCommand('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], { cwd: repo });
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  files = info!.files.map((f) => f.path).sort();
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = await runCommand('npm', ['install', join(root, info!.filename), '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project });
  expect(install.code, install.stderr).toBe(0);
}, 180_000);
/** The demo's throwaway copy, which it leaves for a user to look at. */
const copies: string[] = [];
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe('the package as a user installs it', () => {
  it('holds what runs — the build, the viewer, the diagrams, the demo — and no tests, sources, benches or CI', () => {
    for (const f of [
      'package.json', 'README.md', 'LICENSE',
      'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'dist/examples/flaky-checkout/demo.js',
      'visualizations/viewer/index.html', 'visualizations/viewer/viewer.js', 'visualizations/viewer/viewer.css',
      'visualizations/session.svg', 'visualizations/turn.svg', 'visualizations/step.svg', 'visualizations/tool-call.svg',
      'examples/flaky-checkout/script.json', 'examples/flaky-checkout/project/test/checkout.test.js',
    ]) expect(files, f).toContain(f);
    // The demo's project is shipped whole, its own test included: that test is what the demo fixes.
    const stray = files.filter((f) => !f.startsWith('examples/flaky-checkout/project/')).filter((f) =>
      /\.test\.|^test\/|^bench\/|^\.ci\/|^dist\/(test|bench)\/|^dist\/adapters\/fs\/testing\.|^tsconfig|^vitest\.config/.test(f) ||
      (f.endsWith('.ts') && !f.endsWith('.d.ts')) || (f.startsWith('dist/') && !/\.(js|d\.ts)$/.test(f)));
    expect(stray).toEqual([]);
  });

  it('ships every docs/ page the CLI\'s help and messages point at (issue 23 item 7)', async () => {
    const help = await runCommand('npx', ['--no', '--', 'bridle', 'serve', '--help'], { cwd: project });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('docs/protocol.md');
    // Every page any shipped CLI file names, as a user reads it in the installed package.
    const cliDir = join(project, 'node_modules', pkg.name, 'dist', 'cli');
    const named = new Set(readdirSync(cliDir).filter((f) => f.endsWith('.js')).flatMap((f) => readFileSync(join(cliDir, f), 'utf8').match(/docs\/[a-z0-9-]+\.md/g) ?? []));
    expect([...named]).toContain('docs/protocol.md');
    expect([...named].filter((d) => !files.includes(d))).toEqual([]);
  });

  it('is built by prepack, not prepare (npm runs prepare on every install)', () => {
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.prepare).toBeUndefined();
  });

  describe('the README embedding example', () => {
    let srv: OpenAIServer;
    beforeAll(async () => {
      srv = await startOpenAIServer();
    });
    afterAll(() => srv?.close());

    it('type-checks against the installed types under strict NodeNext, and runs without a key against a local server', { timeout: 120_000 }, async () => {
      writeFileSync(join(project, 'example.ts'), embeddingExample(readFileSync(join(repo, 'README.md'), 'utf8')));
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'],
          // @types/node from this repository: the example is the project's only file.
          types: ['node'], typeRoots: [join(repo, 'node_modules', '@types')],
          skipLibCheck: false, outDir: 'out',
        },
        files: ['example.ts'],
      }));
      const tsc = await runCommand(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: project });
      expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);

      srv.enqueue(toolCallReply([{ id: 'c1', name: 'list_dir', arguments: '{}' }]), textReply('A project that embeds bridle.'));
      const run = await runCommand(process.execPath, ['out/example.js'], { cwd: project, env: userEnv({ OPENAI_BASE_URL: srv.url, OPENAI_API_KEY: '' }) });
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).toBe('1 session/start');
      expect(lines.filter((l) => / (turn\/start|tool\/result|turn\/end)$/.test(l)).map((l) => l.split(' ')[1])).toEqual(['turn/start', 'tool/result', 'turn/end']);
      expect(lines.at(-1)).toBe('completed');
      expect(srv.requests.map((r) => r.body.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini']);
      // The tool ran in the project: the model was shown its files.
      const toolMessage = srv.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
      expect(toolMessage.content).toContain('package.json');
    });
  });

  it('installs as many packages, and as many megabytes, as docs/dependencies.md says; none of the v1 MCP SDK\'s server stack (issue 23 item 8)', () => {
    const packages = installedPackages(join(project, 'node_modules')).filter((p) => p !== pkg.name);
    const megabytes = bytesOnDisk(join(project, 'node_modules')) / (1024 * 1024);
    for (const gone of ['@modelcontextprotocol/sdk', 'express', 'hono', 'cors', 'ajv']) expect(packages, gone).not.toContain(gone);
    expect(packages).toContain('@modelcontextprotocol/client');
    const stated = /\*\*(\d+) packages, about (\d+) MB\*\*/.exec(readFileSync(join(repo, 'docs', 'dependencies.md'), 'utf8'));
    expect(stated, 'docs/dependencies.md states "**N packages, about M MB**"').not.toBeNull();
    expect(packages.length, packages.join(' ')).toBe(Number(stated![1]));
    expect(Math.abs(megabytes - Number(stated![2])) / Number(stated![2]), `${megabytes.toFixed(1)} MB`).toBeLessThan(0.1);
    // The README's row says the same figures (its dependency section is that row).
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toContain(stated![0]);
  });

  it('npx bridle --version prints the version', async () => {
    const r = await runCommand('npx', ['--no', '--', 'bridle', '--version'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  it('npm start of the installed package runs the demo; bridle replay --html makes a page from the viewer it ships', { timeout: 240_000 }, async () => {
    const home = join(root, 'home');
    const demo = await runCommand('npm', ['explore', pkg.name, '--', 'npm', 'start'], { cwd: project, env: userEnv({ BRIDLE_HOME: home }), timeoutMs: 200_000 });
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stderr).toMatch(/scripted model \(canned responses/);
    // The throwaway copy the demo leaves for a user is removed after the file.
    const copy = /the fixed copy stays at (.+?); /.exec(demo.stderr)?.[1];
    if (copy) copies.push(copy);
    const [log] = readdirSync(join(home, 'sessions'));
    const out = join(root, 'replay.html');
    const replay = await runCommand('npx', ['--no', '--', 'bridle', 'replay', join(home, 'sessions', log!), '--html', out], { cwd: project, env: userEnv({ BRIDLE_HOME: home }) });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    // The viewer's page, script and styles and the four diagrams, read from the installed package.
    const page = readFileSync(out, 'utf8');
    const shows = (what: string) => page.includes(what);
    expect({ data: shows('id="bridle-data"'), script: shows('window.bridleViewer'), styles: shows('.approval .what'), diagrams: ['session', 'turn', 'step', 'tool&#45;call'].filter((m) => shows(`machine:${m}`)) })
      .toEqual({ data: true, script: true, styles: true, diagrams: ['session', 'turn', 'step', 'tool&#45;call'] });
  });

  // After the footprint test: this one installs the telemetry peers into the project. Uses the demo's log.
  it('a feature whose optional peers are not installed says what to install, and works once they are (ADR 0070, issue 23 item 8)', { timeout: 120_000 }, async () => {
    const env = userEnv({ BRIDLE_HOME: join(root, 'home') });
    const bridle = (...args: string[]) => runCommand('npx', ['--no', '--', 'bridle', ...args], { cwd: project, env });
    const sessions = await bridle('sessions', '--store', 'postgres://bridle@127.0.0.1:9/none');
    expect({ code: sessions.code, stderr: sessions.stderr }).toEqual({ code: 1, stderr: 'bridle: PACKAGE_MISSING: the Postgres store needs the package pg, which is not installed (an optional peer of bridle): npm install pg@^8.23.1\n' });
    const [log] = readdirSync(join(root, 'home', 'sessions'));
    const path = join(root, 'home', 'sessions', log!);
    expect((await bridle('trace', path)).code, 'the span tree needs no package').toBe(0);
    const missing = await bridle('trace', path, '--json');
    expect(missing.code, missing.stderr).toBe(1);
    const install = /^bridle: PACKAGE_MISSING: OpenTelemetry export needs the package @opentelemetry\/[a-z-]+, which is not installed \(an optional peer of bridle\): (npm install .+)$/.exec(missing.stderr.trim());
    expect(install, missing.stderr).not.toBeNull();
    // The command it names, as a user would paste it.
    const [npm, ...args] = install![1]!.split(' ');
    const installed = await runCommand(npm!, [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project });
    expect(installed.code, installed.stderr).toBe(0);
    const trace = await bridle('trace', path, '--json');
    expect(trace.code, trace.stderr).toBe(0);
    expect((JSON.parse(trace.stdout) as { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name).toMatch(/^invoke_agent /);
  });
});
