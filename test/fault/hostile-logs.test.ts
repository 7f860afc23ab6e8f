/**
 * Hostile log inputs through the real CLI: `replay`, `replay --machines`,
 * `resume` and `run --session` each meet a log that is not one (a `null`
 * line, invalid UTF-8, CR LF line ends, a directory, a FIFO, garbage, …) and
 * must answer with one named error and exit 2 — never a stack trace, a hang,
 * or "ok". Every run is counted; the suite fails on any crash or hang.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachableAs } from '../helpers/system-deps.js';
import { CLI, cliBuilt, createWorld, seeded, type World } from './cli-world.js';

const HANG_MS = 15_000;
const NOBODY = { uid: 65534, gid: 65534 };

/**
 * Run as root, a test that drops to `nobody` needs `nobody` to reach the CLI:
 * in a checkout under a private directory it cannot, so the test is skipped
 * saying so (or fails saying so where system dependencies are required).
 */
function userFor(what: string, skip: (note?: string) => void): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const verdict = reachableAs(what, NOBODY, [CLI]);
  if (verdict.kind === 'fail') throw new Error(verdict.line);
  if (verdict.kind === 'skip') {
    console.warn(verdict.line);
    skip(verdict.line);
  }
  return NOBODY;
}
const WORK = { label: 'scripted: hostile base', responses: [{ text: 'looking', toolCalls: [{ name: 'list_dir', arguments: {} }] }, { text: 'done' }] };

interface Outcome {
  code: number | null;
  out: string;
  hung: boolean;
}
const tally = { tried: 0, crashes: 0, hangs: 0 };

async function cli(w: World, args: string[], as?: { uid: number; gid: number }, env?: NodeJS.ProcessEnv): Promise<Outcome> {
  const child = w.spawn(args, { ...(as ? { as } : {}), ...(env ? { env } : {}) });
  let out = '';
  child.proc.stdout!.removeAllListeners('data');
  child.proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.proc.kill('SIGKILL');
  }, HANG_MS);
  const { code } = await child.exit;
  clearTimeout(timer);
  const all = `${out}${child.stderr()}`;
  tally.tried++;
  if (hung) tally.hangs++;
  else if (crashed(code, all)) tally.crashes++;
  return { code, out: all, hung };
}

/** A crash: an exit other than 0 and 2, or a stack trace, or the catch-all's "unexpected failure". */
const crashed = (code: number | null, out: string) => (code !== 0 && code !== 2) || /unexpected failure|\n\s+at .+:\d+:\d+/.test(out);

let w: World;
let base: string[];
/** Written once: the cases run concurrently, and a script rewritten while another CLI reads it would read torn. */
let nextScript: string;
const common = () => ['--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'off', '--model', `scripted:${nextScript}`];

beforeAll(async () => {
  if (!cliBuilt) return;
  w = createWorld();
  const r = await cli(w, ['run', 'look around', '--model', `scripted:${w.script('work.json', WORK)}`, '--cwd', w.workspace, '--approval', 'auto', '--sandbox', 'off']);
  expect(r.code, r.out).toBe(0);
  base = fs.readFileSync(w.logPath()!, 'utf8').split('\n').slice(0, -1);
  nextScript = w.script('next.json', { responses: [{ text: 'next' }] });
  fs.rmSync(path.join(w.home, 'sessions'), { recursive: true });
  fs.mkdirSync(path.join(w.home, 'sessions'));
});
afterAll(() => {
  w?.cleanup();
  if (cliBuilt) process.stderr.write(`hostile log inputs: ${tally.tried} CLI runs, ${tally.crashes} crashes, ${tally.hangs} hangs\n`);
});

interface Case {
  name: string;
  /** Writes the hostile log and returns its path. */
  make: (file: string) => void;
  /** The named error every command must print (a violation or an access code). */
  named: RegExp;
}

const lines = (...ls: (string | Buffer)[]) => Buffer.concat(ls.map((l) => Buffer.concat([Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from('\n')])));
const badUtf8Line = () => {
  const l = Buffer.from(base[1]!.replace('"look around"', '"look \u0001round"'));
  l[l.indexOf(1)] = 0xff;
  return l;
};
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

const CASES: Case[] = [
  { name: 'a line that is JSON null', make: (f) => fs.writeFileSync(f, lines(base[0]!, 'null', ...base.slice(1))), named: /bad-entry/ },
  { name: 'invalid UTF-8 inside a JSON string', make: (f) => fs.writeFileSync(f, lines(base[0]!, badUtf8Line(), ...base.slice(2))), named: /bad-utf8/ },
  { name: 'a directory given as the log', make: (f) => fs.mkdirSync(f), named: /LOG_NOT_A_FILE/ },
  { name: 'a FIFO given as the log', make: (f) => execFileSync('mkfifo', [f]), named: /LOG_NOT_A_FILE/ },
  { name: 'CR LF line ends', make: (f) => fs.writeFileSync(f, base.map((l) => `${l}\r\n`).join('')), named: /bad-line-end/ },
  { name: 'a byte-order mark', make: (f) => fs.writeFileSync(f, `\ufeff${base.map((l) => `${l}\n`).join('')}`), named: /bad-json/ },
  { name: 'an empty file (a session claimed, never committed: no session)', make: (f) => fs.writeFileSync(f, ''), named: /no session log at / },
  { name: 'blank lines only', make: (f) => fs.writeFileSync(f, '\n\n\n'), named: /bad-json/ },
  { name: 'seeded binary garbage', make: (f) => fs.writeFileSync(f, Buffer.from(Array.from({ length: 4096 }, ((r) => () => Math.floor(r() * 256))(seeded(9101))))), named: /bad-utf8|bad-json/ },
  { name: 'arrays nested 200,000 deep', make: (f) => fs.writeFileSync(f, lines(base[0]!, nested(200_000), ...base.slice(1))), named: /bad-entry|bad-json/ },
  { name: 'a seq of 1e300 and a negative seq', make: (f) => fs.writeFileSync(f, lines(base[0]!, base[1]!.replace('"seq":2', '"seq":1e300'), base[2]!.replace('"seq":3', '"seq":-3'))), named: /bad-entry/ },
  { name: 'kind "__proto__" and a __proto__ key', make: (f) => fs.writeFileSync(f, lines(base[0]!, '{"seq":2,"kind":"__proto__"}', '{"__proto__":{"kind":"turn/start"}}')), named: /unknown-kind/ },
  { name: 'a whitespace-only line of 4 MiB', make: (f) => fs.writeFileSync(f, lines(base[0]!, ' '.repeat(4 << 20), ...base.slice(1))), named: /bad-json/ },
];

/** Logs that parse but lie deep inside: each command may refuse (2) or go on (0), never crash or hang. */
const DEEP: { name: string; make: (file: string) => void }[] = [
  {
    name: 'a checkpoint whose snapshot is an object nested 100,000 deep',
    make: (f) => {
      const at = base.findLastIndex((l) => l.includes('"kind":"checkpoint"'));
      const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      const line = base[at]!.replace(/"snapshot":.*\}$/, `"snapshot":${deep}}`);
      fs.writeFileSync(f, lines(...base.slice(0, at), line, ...base.slice(at + 1)));
    },
  },
];

describe.skipIf(!cliBuilt).concurrent('hostile log inputs through the real CLI: one named error, exit 2', () => {
  CASES.forEach((c, i) => {
    it(c.name, async () => {
      const file = path.join(w.root, `hostile-${i}.jsonl`);
      c.make(file);
      const runs = [
        ['replay', file],
        ['replay', file, '--machines', '--json'],
        ['resume', file, '--continue', ...common()],
        ['run', 'more', '--session', file, ...common()],
      ];
      for (const args of runs) {
        const r = await cli(w, args);
        const what = `${args.slice(0, 2).join(' ')}${args.includes('--machines') ? ' --machines' : ''}: ${r.out}`;
        expect(r.hung, what).toBe(false);
        expect(crashed(r.code, r.out), what).toBe(false);
        expect(r.code, what).toBe(2);
        expect(r.out, what).toMatch(c.named);
        expect(r.out, what).not.toMatch(/^ok: /m);
      }
    });
  });

  DEEP.forEach((c, i) => {
    it(`${c.name}: no crash, no hang`, async () => {
      const file = path.join(w.root, `deep-${i}.jsonl`);
      c.make(file);
      for (const args of [['replay', file], ['replay', file, '--machines'], ['resume', file, '--continue', ...common()], ['run', 'more', '--session', file, ...common()]]) {
        const r = await cli(w, args);
        expect(r.hung, r.out).toBe(false);
        expect(crashed(r.code, r.out), r.out).toBe(false);
      }
    });
  });

  it('an unwritable sessions directory: run is LOG_UNWRITABLE, exit 2, for a file in its place and for a directory without write permission', async (ctx) => {
    const homes = [path.join(w.root, 'home-file'), path.join(w.root, 'home-ro')];
    for (const h of homes) fs.mkdirSync(h);
    fs.writeFileSync(path.join(homes[0]!, 'sessions'), 'not a directory');
    fs.mkdirSync(path.join(homes[1]!, 'sessions'), { mode: 0o555 });
    // As root, permission bits do not stop a write: run that one as an ordinary user.
    const asUser = userFor('an unwritable sessions directory', (note) => ctx.skip(note));
    fs.chmodSync(w.root, 0o755);
    fs.chmodSync(w.workspace, 0o777);
    const script = w.script('plain.json', { responses: [{ text: 'hi' }] });
    fs.chmodSync(script, 0o644);
    for (const [k, h] of homes.entries()) {
      const args = ['run', 'hello', '--model', `scripted:${script}`, '--cwd', w.workspace, '--sandbox', 'off'];
      const r = await cli(w, args, k === 1 ? asUser : undefined, { BRIDLE_HOME: h, HOME: w.root });
      expect(crashed(r.code, r.out), r.out).toBe(false);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toMatch(/LOG_UNWRITABLE: cannot (create the log directory|create the log)/);
    }
  });

  it('a crashed log whose file cannot be written: resume is LOG_UNWRITABLE, exit 2, and the log is left as it was', async (ctx) => {
    const file = path.join(w.root, 'readonly-crash.jsonl');
    const cut = base.findIndex((l) => l.includes('"kind":"tool/dispatch"'));
    const text = base.slice(0, cut + 1).map((l) => `${l}\n`).join('');
    fs.writeFileSync(file, text, { mode: 0o644 });
    fs.chmodSync(w.root, 0o755);
    const asUser = userFor('a crashed log whose file cannot be written', (note) => ctx.skip(note));
    if (!asUser) fs.chmodSync(file, 0o444);
    const r = await cli(w, ['resume', file], asUser);
    expect(crashed(r.code, r.out), r.out).toBe(false);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toMatch(/LOG_UNWRITABLE/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('a log cut inside a multi-byte character is a torn tail: replay says repairable (exit 2), resume repairs it, then it verifies', async () => {
    const file = path.join(w.root, 'cut-char.jsonl');
    const last = Buffer.from(base.at(-1)!.replace(/"turn":"t1"/, '"turn":"t1","x":"🙂"'));
    fs.writeFileSync(file, Buffer.concat([lines(...base.slice(0, -1)), last.subarray(0, last.indexOf(Buffer.from('🙂')) + 2)]));
    const before = await cli(w, ['replay', file]);
    expect(before.code, before.out).toBe(2);
    expect(before.out).toMatch(/repairable: torn-tail/);
    const repaired = await cli(w, ['resume', file]);
    expect(repaired.code, repaired.out).toBe(0);
    expect(repaired.out).toMatch(/torn tail: line \d+ \(\d+ bytes\)/);
    const after = await cli(w, ['replay', file]);
    expect(after.code, after.out).toBe(0);
  });

  it('bridle sessions meets a FIFO named x.jsonl: refused as LOG_NOT_A_FILE without hanging; the other logs are listed', async () => {
    const dir = path.join(w.root, 'sessions-fifo');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'good.jsonl'), lines(...base));
    execFileSync('mkfifo', [path.join(dir, 'x.jsonl')]);
    const r = await cli(w, ['sessions', '--store', dir]);
    expect(r.hung, 'bridle sessions hung on the FIFO').toBe(false);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^good\s+idle/m);
    expect(r.out).toMatch(/bridle: LOG_NOT_A_FILE: .*x\.jsonl is a FIFO, not a session log/);
  });

  it("bridle sessions lists a log by its file's name, not the id its header claims, and reports the mismatch", async () => {
    const dir = path.join(w.root, 'sessions-claims');
    fs.mkdirSync(dir);
    const header = JSON.parse(base[0]!) as { id: string };
    fs.writeFileSync(path.join(dir, 'honest.jsonl'), lines(base[0]!.replace(JSON.stringify(header.id), '"../../x"'), ...base.slice(1)));
    const r = await cli(w, ['sessions', '--store', dir, '--json']);
    expect(r.code, r.out).toBe(0);
    const listed = JSON.parse(r.out.split('\n')[0]!) as { sessions: { id: string }[]; problems: { file: string; code: string; message: string }[] };
    expect(listed.sessions.map((x) => x.id)).toEqual(['honest']);
    expect(listed.problems).toEqual([{ file: 'honest.jsonl', code: 'LOG_ID_MISMATCH', message: expect.stringContaining('"../../x"') }]);
  });
});
