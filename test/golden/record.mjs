#!/usr/bin/env node
// Records the golden logs that come from CLI runs (see README.md here):
//   npm run build && node test/golden/record.mjs [name…]
// Each scenario runs the built CLI (`dist/cli/main.js`) as a user would, with
// a scripted model, in a throwaway workspace and $BRIDLE_HOME, then copies the
// session log here. Names: ctrl-c, crash-resume, compaction, approvals, schedule.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../../dist/cli/main.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function world() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-golden-')));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  fs.mkdirSync(ws);
  fs.mkdirSync(home);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: home };
  return {
    root,
    ws,
    script(name, body) {
      const f = path.join(root, name);
      fs.writeFileSync(f, JSON.stringify(body, null, 2));
      return `scripted:${f}`;
    },
    spawn(args) {
      const proc = spawn(process.execPath, [CLI, ...args], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      proc.stdout.on('data', (d) => (out += d));
      proc.stderr.on('data', (d) => (err += d));
      const exit = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
      return { proc, out: () => out, err: () => err, exit };
    },
    log() {
      const dir = path.join(home, 'sessions');
      const [f] = fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
      return path.join(dir, f);
    },
    exists: (f) => fs.existsSync(path.join(ws, f)),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

async function until(check, what, ms = 20_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function finished(child, want) {
  const { code } = await child.exit;
  if (!want.includes(code)) throw new Error(`exit ${code}, wanted ${want.join(' or ')}\n${child.err()}`);
}

const scenarios = {
  // `bridle run`, Ctrl-C while the first of two commands runs: ABORTED, ABORTED_BEFORE_DISPATCH, exit 130.
  async 'ctrl-c'(w) {
    const model = w.script('ctrl-c.json', {
      label: 'scripted: golden ctrl-c',
      responses: [
        { text: 'Looking around first.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
        { text: 'Two commands.', toolCalls: [{ name: 'bash', arguments: { command: 'echo c1 >> marker; sleep 5' } }, { name: 'bash', arguments: { command: 'echo c2 >> marker' } }] },
        { text: 'never reached' },
      ],
    });
    const child = w.spawn(['run', 'tidy up the workspace', '--model', model, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off']);
    child.proc.stdin.end();
    await until(() => w.exists('marker'), 'the first command');
    child.proc.kill('SIGINT');
    await finished(child, [130]);
  },

  // `bridle run` killed (SIGKILL) while a command runs; then `bridle resume <id> --continue` with another script.
  async 'crash-resume'(w) {
    const model = w.script('crash.json', {
      label: 'scripted: golden crash',
      responses: [{ text: 'Starting the long job.', toolCalls: [{ name: 'bash', arguments: { command: 'echo started >> marker; sleep 30' } }] }, { text: 'never reached' }],
    });
    const child = w.spawn(['run', 'run the long job', '--model', model, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off']);
    child.proc.stdin.end();
    await until(() => w.exists('marker'), 'the long job to start');
    child.proc.kill('SIGKILL');
    await child.exit;
    const resume = w.script('resume.json', {
      label: 'scripted: golden resume',
      responses: [
        { text: 'The job was interrupted; checking what it left.', toolCalls: [{ name: 'read_file', arguments: { path: 'marker' } }] },
        { text: 'It started once and left its marker; nothing else to redo.' },
      ],
    });
    const again = w.spawn(['resume', w.log(), '--continue', '--model', resume, '--approval', 'auto', '--sandbox', 'off']);
    again.proc.stdin.end();
    await finished(again, [0]);
  },

  // `bridle chat --context-window 2048`: queued prompts, pressure compactions, a manual /compact, summaries from the script.
  async compaction(w) {
    fs.writeFileSync(path.join(w.ws, 'notes.txt'), Array.from({ length: 30 }, (_, i) => `note ${i + 1}: the checkout total is rounded at line ${10 + i}`).join('\n'));
    const summary = (n) =>
      `## Request and intent\nread the notes (${n})\n## Key facts\nthe notes are about rounding\n## Files touched\nnotes.txt read\n## Errors and fixes\nnone\n## Current work\nreading\n## Next step\nanswer`;
    const model = w.script('compaction.json', {
      label: 'scripted: golden compaction',
      responses: [
        { text: 'Reading the notes.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'They are all about rounding.' },
        { text: summary(1) },
        { text: 'Reading them again, per line.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt', offset: 10, limit: 20 } }] },
        { text: 'Second answer: rounding happens per line.' },
        { text: 'Third answer: round once, at the end.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt', offset: 20 } }] },
        { text: summary(2) },
        { text: 'Round once, at the end: notes 20 to 30 agree.' },
        { text: summary(3) },
        { text: 'spare answer' },
      ],
    });
    const child = w.spawn(['chat', '--model', model, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off', '--context-window', '2048']);
    child.proc.stdin.end('what do the notes say?\nand per line?\n/compact\nso what is the fix?\n');
    await finished(child, [0]);
  },

  // `bridle chat --approval ask --allow 'bash:^ls( |$)'` in a read-only sandbox: a rule allows, the read-only guard denies,
  // a person answers no, then always (answers typed when asked).
  async approvals(w) {
    const model = w.script('approvals.json', {
      label: 'scripted: golden approvals',
      responses: [
        { text: 'Listing, then writing a note.', toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }, { name: 'write_file', arguments: { path: 'note.txt', content: 'hi' } }] },
        { text: 'Then by command.', toolCalls: [{ name: 'bash', arguments: { command: 'touch note.txt' } }] },
        { text: 'Something harmless.', toolCalls: [{ name: 'bash', arguments: { command: 'echo hello' } }] },
        { text: 'Done: the workspace is read-only, so nothing was written.' },
      ],
    });
    const child = w.spawn(['chat', '--model', model, '--cwd', w.ws, '--approval', 'ask', '--allow', 'bash:^ls( |$)', '--sandbox', 'bwrap', '--sandbox-mode', 'read-only']);
    child.proc.stdin.write('write a note\n');
    const answers = ['n', 'a'];
    let asked = 0;
    while (answers.length > 0) {
      await until(() => (child.out().match(/\[y\]es \/ \[n\]o/g) ?? []).length > asked, 'an approval question');
      asked++;
      child.proc.stdin.write(`${answers.shift()}\n`);
    }
    await until(() => child.out().includes('Done: the workspace is read-only'), 'the last answer');
    child.proc.stdin.end();
    await finished(child, [0]);
  },

  // `bridle run`, one answer of two reads, a write and a read: the reads run together, the write waits for both and
  // holds back the last read. The order the scheduler released them in is in the log, so replay pins it.
  async schedule(w) {
    fs.writeFileSync(path.join(w.ws, 'prices.txt'), 'apple 120\nbread 350\ncoffee 899\n');
    fs.writeFileSync(path.join(w.ws, 'cart.txt'), 'apple 3\ncoffee 1\n');
    const model = w.script('schedule.json', {
      label: 'scripted: golden schedule',
      responses: [
        {
          text: 'Reading the prices and the cart together, then writing the total and reading it back.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'prices.txt' } },
            { name: 'read_file', arguments: { path: 'cart.txt' } },
            { name: 'write_file', arguments: { path: 'total.txt', content: 'total 1259\n' } },
            { name: 'read_file', arguments: { path: 'total.txt' } },
          ],
        },
        { text: 'The total is 1259 cents, written to total.txt.' },
      ],
    });
    const child = w.spawn(['run', 'total the cart into total.txt', '--model', model, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off']);
    child.proc.stdin.end();
    await finished(child, [0]);
  },
};

const wanted = process.argv.slice(2);
for (const [name, run] of Object.entries(scenarios)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const w = world();
  try {
    await run(w);
    fs.copyFileSync(w.log(), path.join(here, `${name}.jsonl`));
    console.log(`recorded ${name}.jsonl`);
  } finally {
    w.cleanup();
  }
}
