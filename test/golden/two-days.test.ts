/**
 * Chapter 12: "remove every clock/random/network dependency from a harness
 * slice; done when two runs on two different simulated days produce
 * byte-identical transcripts." The slice is the product itself (the base
 * bundle's rows: the JSONL store, the local file system and subprocess, the
 * real tools, the approval policy) with a scripted model, the session id
 * given, and the `fixed` clock row injected on two different days. Only `at`
 * may differ, and it differs by exactly the day.
 */
import { cpSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRenderer } from '../../cli/render.js';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { createSession } from '../../runtime/session.js';
import { TOOLS } from '../../ports/index.js';
import { tempDir } from '../helpers/temp.js';

const DAY = 86_400_000;
const root = realpathSync(tempDir('bridle-two-days-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const script = join(root, 'script.json');
writeFileSync(
  script,
  JSON.stringify({
    label: 'scripted: two simulated days',
    responses: [
      // One read per answer: results are logged as calls finish, and two reads in one answer may finish in either order.
      { text: 'Looking first.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
      { text: 'Reading the cart.', toolCalls: [{ name: 'read_file', arguments: { path: 'cart.txt' } }] },
      { text: 'Writing the total and checking it.', toolCalls: [{ name: 'write_file', arguments: { path: 'total.txt', content: 'total 1259\n' } }, { name: 'bash', arguments: { command: 'cat total.txt; wc -l < cart.txt' } }] },
      { text: 'The total is 1259 cents.' },
    ],
  }),
);
const seed = join(root, 'seed');
mkdirSync(seed);
writeFileSync(join(seed, 'cart.txt'), 'apple 3\ncoffee 1\n');

/** One run on `day`: the same workspace path and session id each time, a fresh copy of the same files, its own home. */
async function runOn(day: string): Promise<{ text: string; entries: Entry[]; transcript: string }> {
  const ws = join(root, 'ws');
  rmSync(ws, { recursive: true, force: true });
  cpSync(seed, ws, { recursive: true });
  const home = join(root, `home-${day}`);
  const session = createSession({
    cwd: ws,
    bridleHome: home,
    id: 'two-days',
    settings: { model: `scripted:${script}`, approval: 'auto', sandbox: 'off' },
    patch: [{ id: 'clock', use: 'fixed', config: { start: `${day}T09:00:00.000Z` } }],
  }).start();
  const tools = new Map(session.host.get(TOOLS).list().map((t) => [t.name, t]));
  const out = await session.run('total the cart');
  expect(out.reason).toBe('completed');
  await session.close();
  const text = readFileSync(session.recorder.store.location, 'utf8');
  const entries = parseLog(text).entries;
  let transcript = '';
  const r = createRenderer({ write: (s: string) => (transcript += s) }, tools);
  for (const e of entries) r.onEntry(e);
  return { text, entries, transcript };
}

const withoutAt = (text: string) => text.replace(/"at":"[^"]*",/g, '');

describe('chapter 12: two runs on two simulated days', () => {
  it('two runs on two different simulated days produce byte-identical transcripts, apart from at', async () => {
    const a = await runOn('2026-03-01');
    const b = await runOn('2026-11-30');
    expect(a.entries.length).toBeGreaterThan(10);
    expect(a.entries.some((e) => e.kind === 'tool/result' && e.name === 'bash' && e.status === 'ok')).toBe(true);
    expect(withoutAt(b.text)).toBe(withoutAt(a.text));
    expect(b.transcript).toBe(a.transcript);
    // `at` is the only difference, and every entry's moves by the same 274 days.
    const shift = Date.parse('2026-11-30') - Date.parse('2026-03-01');
    expect(shift / DAY).toBe(274);
    expect(b.entries.map((e, i) => Date.parse(e.at) - Date.parse(a.entries[i]!.at))).toEqual(a.entries.map(() => shift));
  });
});
