/**
 * The CLI's surface as the docs state it: every command in the README's
 * table (and docs/cli.md's) exists and its `--help` exits 0, listing each flag
 * on one line; every flag in docs/cli.md's flag table is a real flag, and
 * every real flag is there; mistakes are one line, exit 2.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const cliDoc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
/** Every page a user reads: a command's own flags may be documented on its topic's page (serve's in docs/serving.md). */
const docsDir = new URL('../../docs/', import.meta.url);
const allDocs = [readme, ...readdirSync(docsDir).filter((f) => f.endsWith('.md')).map((f) => readFileSync(new URL(f, docsDir), 'utf8'))].join('\n');
const tableRows = (text: string) => text.split('\n').filter((l) => l.startsWith('| `'));
const commandsOf = (text: string) => [...new Set(tableRows(text).flatMap((l) => [...l.split('|')[1]!.matchAll(/`bridle ([a-z]+)/g)].map((m) => m[1]!)))];
const commands = commandsOf(readme.slice(readme.indexOf('## The commands'), readme.indexOf('## Where everything is')));
const flags = [...new Set(tableRows(cliDoc).flatMap((l) => [...l.split('|')[1]!.matchAll(/`(--[a-z-]+)/g)].map((m) => m[1]!)))];
const SESSION_COMMANDS = ['run', 'chat', 'resume', 'serve', 'acp'];
const env = () => ({ BRIDLE_HOME: tempDir('bridle-help-') });
/** Each command's `--help`, run once and shared by the tests that read it (a CLI start is most of this file's time). */
const helps = new Map<string, ReturnType<typeof runCli>>();
const helpOf = (command: string) => {
  let h = helps.get(command);
  if (!h) helps.set(command, (h = runCli([command, '--help'], { env: env() })));
  return h;
};

/** The lines of the Options section: each option's own line, and any line a wrapped description spilled onto. */
function optionLines(help: string): string[] {
  const rest = help.slice(help.indexOf('Options:\n') + 'Options:\n'.length);
  const end = rest.indexOf('\n\n');
  return (end < 0 ? rest : rest.slice(0, end)).split('\n').filter((l) => l.trim() !== '');
}

describe('the README table is the CLI', () => {
  it('the README names every command docs/design.md §6 lists, and ralph (docs/design.md §2), eval, fork and sessions (issues #14, #15)', () => {
    expect(commands.sort()).toEqual(['acp', 'chat', 'config', 'cost', 'eval', 'fork', 'mcp', 'ralph', 'replay', 'resume', 'run', 'serve', 'sessions', 'trace', 'viz']);
  });

  it('docs/cli.md describes the same commands as the README', () => {
    expect(commandsOf(cliDoc).sort()).toEqual([...commands].sort());
  });

  it('bridle --help lists every command, and nothing the README does not', async () => {
    const r = await runCli(['--help'], { env: env() });
    expect(r.code).toBe(0);
    const listed = [...r.stdout.slice(r.stdout.indexOf('Commands:')).matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(listed.sort()).toEqual([...commands].sort());
    expect(r.stdout).toMatch(/Exit codes: 0 turn done, 1 turn failed or setup problem, 2 usage error or corrupt log, 130 cancelled/);
  });

  it.each(commands)('bridle %s --help exits 0 and lists each flag on one line', async (command) => {
    const r = await helpOf(command);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: bridle ${command} `));
    const lines = optionLines(r.stdout);
    expect(lines.length).toBeGreaterThan(1);
    // A wrapped description would be a line that does not start with a flag.
    for (const l of lines) expect(l).toMatch(/^ {2}-/);
  });

  it('every flag in the docs/cli.md table is a flag of a session command', async () => {
    const all = (await Promise.all(SESSION_COMMANDS.map(async (c) => (await helpOf(c)).stdout))).join('\n');
    expect(flags.length).toBeGreaterThan(10);
    for (const f of flags) expect(all, f).toMatch(new RegExp(`^ {2}(-\\w, )?${f}\\b`, 'm'));
  });

  it('every flag of every command is in the docs', { timeout: 120_000 }, async () => {
    for (const c of commands) {
      const help = (await helpOf(c)).stdout;
      const own = optionLines(help).map((l) => /--[a-z-]+/.exec(l)![0]).filter((f) => f !== '--help');
      for (const f of own) expect(allDocs, `${c} ${f}`).toMatch(new RegExp(`\`(bridle [a-z]+ [^\`]*)?${f}\\b`));
    }
  });
});

describe('mistakes are one line, exit 2', () => {
  it('an unknown command', async () => {
    const r = await runCli(['frobnicate'], { env: env() });
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', "bridle: unknown command 'frobnicate' (see bridle --help)\n"]);
  });

  it('an unknown flag', async () => {
    const r = await runCli(['run', '--frobnicate', 'x'], { env: env() });
    expect([r.code, r.stderr]).toEqual([2, "bridle: unknown option '--frobnicate'\n"]);
  });

  it('bridle run with no prompt and an empty stdin that is not a terminal', async () => {
    const r = await runCli(['run'], { env: env(), input: '' });
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', 'bridle: no prompt: stdin was empty; pass the prompt as an argument or pipe it in\n']);
  });

  it('--version is the package version', async () => {
    const r = await runCli(['--version'], { env: env() });
    expect([r.code, r.stdout.trim()]).toEqual([0, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version]);
  });
});
