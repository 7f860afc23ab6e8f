import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseFunction } from '../../adapters/model/scripted.js';
import { estimateRequestTokens } from '../../log/context/tokens.js';
import type { EntryOf } from '../../log/entries.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';
import { builtinTools } from '../../tools/index.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string | undefined;
let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n# ${name}\n\nSTEPS OF ${name.toUpperCase()}\n`;

/** A workspace and a home; `skills` are written into the workspace's `.agents/skills/`, `home` into `$BRIDLE_HOME/skills/`. */
function fixture(skills: Record<string, string> = {}, home: Record<string, string> = {}) {
  root = fs.realpathSync(tempDir('bridle-skills-s-'));
  const ws = path.join(root, 'ws');
  const bridleHome = path.join(root, 'home');
  fs.mkdirSync(ws);
  fs.mkdirSync(bridleHome);
  const put = (dir: string, name: string, text: string) => {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    fs.writeFileSync(path.join(dir, name, 'SKILL.md'), text);
  };
  for (const [n, t] of Object.entries(skills)) put(path.join(ws, '.agents', 'skills'), n, t);
  for (const [n, t] of Object.entries(home)) put(path.join(bridleHome, 'skills'), n, t);
  return { ws, bridleHome };
}

async function run(respond: ResponseFunction, where: { ws: string; bridleHome: string }, over: HarnessOptions = {}) {
  h = createHarness(respond, { cwd: where.ws, bridleHome: where.bridleHome, ...over });
  h.session.send('go');
  await h.session.idle();
  return h;
}

/** A description as long as a typical real skill's (about 250 characters). */
const typical = (i: number) =>
  `Work with kind ${i} documents: extract text and tables, fill in forms, merge and split files, and check the result against the source. Use when the user mentions kind ${i} files or asks for any of these, even without naming the format.`;

describe('Agent Skills in a session (issue 23 item 5)', () => {
  it('with no skills the requests are byte for byte those of a product without the row', async () => {
    const done = () => ({ text: 'done' });
    const where = fixture();
    const a = await run(done, where);
    const withRow = JSON.stringify(a.requests.map((r) => r.request));
    expect(a.entries().some((e) => e.kind === 'skills/found')).toBe(false);
    a.cleanup();
    const b = await run(done, where, { patch: [{ id: 'prompt:skills', remove: true }] });
    expect(JSON.stringify(b.requests.map((r) => r.request))).toBe(withRow);
  });

  it('lists each skill by name and description, loads a body through the skill tool and a read of its SKILL.md, and replay is identical', async () => {
    const where = fixture({ 'pdf-forms': skillMd('pdf-forms', 'Fill in PDF forms.\n  Use for any PDF form.'), Bad: skillMd('Bad', 'x') }, { 'release-notes': skillMd('release-notes', 'Write release notes from the git log.') });
    const calls = [
      { name: 'skill', arguments: { name: 'release-notes' } },
      { name: 'read_file', arguments: { path: '.agents/skills/pdf-forms/SKILL.md' } },
      { name: 'skill', arguments: { name: 'nope' } },
    ];
    await run((_r, i) => (i < calls.length ? { toolCalls: [calls[i]!] } : { text: 'done' }), where);
    const header = h!.entries().find((e): e is EntryOf<'request/header'> => e.kind === 'request/header')!;
    expect(header.system.endsWith('\n\nSkills (instructions for particular tasks): when a task fits one, call `skill` with its name and follow what it says.\n- pdf-forms: Fill in PDF forms. Use for any PDF form.\n- release-notes: Write release notes from the git log.')).toBe(true);
    expect(header.tools.at(-1)!.name).toBe('skill');
    expect(header.system).not.toContain('STEPS OF');
    const results = h!.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results[0]!.content).toBe('<skill name="release-notes" path="$BRIDLE_HOME/skills/release-notes/SKILL.md">\n# release-notes\n\nSTEPS OF RELEASE-NOTES\n</skill>\nIts files are in its directory; read one with skill {"name": "release-notes", "path": "<file>"}.');
    expect(results[1]!.content).toContain('STEPS OF PDF-FORMS');
    expect([results[2]!.status, results[2]!.code]).toEqual(['error', 'SKILL_NOT_FOUND']);
    const found = h!.entries().filter((e): e is EntryOf<'skills/found'> => e.kind === 'skills/found');
    expect(found.map((e) => [e.skills.map((s) => s.name), e.warnings.map((w) => w.code)])).toEqual([[['pdf-forms', 'release-notes'], ['SKILL_NAME_INVALID']]]);
    expect(h!.entries().findIndex((e) => e.kind === 'skills/found')).toBeLessThan(h!.entries().findIndex((e) => e.kind === 'turn/start'));

    // As `bridle replay` does: the `skill` tool stands in from the logged header, its results come from the log.
    const r = await replayThroughMachines(h!.entries(), toolsOfLog(h!.entries(), builtinTools()));
    expect(r.identical).toBe(true);
  });

  it('a file of a home skill is read through the tool, confined to the skill’s directory', async () => {
    const where = fixture({}, { notes: skillMd('notes', 'Notes.') });
    fs.mkdirSync(path.join(where.bridleHome, 'skills', 'notes', 'references'));
    fs.writeFileSync(path.join(where.bridleHome, 'skills', 'notes', 'references', 'style.md'), 'THE STYLE');
    fs.writeFileSync(path.join(where.bridleHome, 'config.yaml'), 'HOME CONFIG');
    fs.symlinkSync(path.join(where.bridleHome, 'config.yaml'), path.join(where.bridleHome, 'skills', 'notes', 'config.md'));
    const paths = ['references/style.md', '../../config.yaml', 'config.md', 'missing.md'];
    await run((_r, i) => (i < paths.length ? { toolCalls: [{ name: 'skill', arguments: { name: 'notes', path: paths[i] } }] } : { text: 'done' }), where);
    const results = h!.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results.map((e) => e.code ?? e.content)).toEqual(['THE STYLE', 'SKILL_PATH_OUTSIDE', 'SKILL_FILE_NOT_READ', 'NOT_FOUND']);
    expect(JSON.stringify(h!.entries())).not.toContain('HOME CONFIG');
  });

  it('N installed skills add at most about 100 tokens each to the first request', async () => {
    const first = async (n: number) => {
      const skills = Object.fromEntries(Array.from({ length: n }, (_, i) => [`kind-${i}-docs`, skillMd(`kind-${i}-docs`, typical(i))]));
      const hh = await run(() => ({ text: 'done' }), fixture(skills));
      const tokens = estimateRequestTokens(hh.requests[0]!.request);
      hh.cleanup();
      fs.rmSync(root!, { recursive: true, force: true });
      return tokens;
    };
    const none = await first(0);
    const one = await first(1);
    const ten = await first(10);
    const each = (ten - none) / 10;
    const marginal = (ten - one) / 9;
    console.log(`skills: +${one - none} tokens for 1, +${ten - none} for 10 (${each} each, ${marginal.toFixed(1)} marginal)`);
    expect(each).toBeLessThanOrEqual(100);
    expect(marginal).toBeLessThanOrEqual(100);
  });
});
