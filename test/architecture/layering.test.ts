import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayering, COMPOSITION_ROOT, cycles, LAYERS, passThroughExports, sourceFiles } from './layering.js';
import { tempDir } from '../helpers/temp.js';

describe('the layering of docs/design.md §1', () => {
  it('no file imports against the layering: machines import no I/O, nothing below imports from above, no import circle', () => {
    expect(checkLayering(process.cwd())).toEqual([]);
  });

  it('only the composition root and index.ts import adapters/: a CLI file that imports a store internal is a violation', () => {
    const root = tempDir('bridle-layering-');
    const put = (f: string, text: string) => {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), text);
    };
    try {
      put('adapters/store/jsonl-lock.ts', 'export const lock = 1;\n');
      put('adapters/store/jsonl.ts', "import { lock } from './jsonl-lock.js';\n");
      put('cli/resume.ts', "import { lock } from '../adapters/store/jsonl-lock.js';\n");
      put('server/hub.ts', "import type { X } from '../adapters/store/jsonl.js';\n");
      put('runtime/stores.ts', "import { lock } from '../adapters/store/jsonl-lock.js';\n");
      put('index.ts', "export { lock } from './adapters/store/jsonl-lock.js';\n");
      expect(checkLayering(root).map((v) => `${v.file}: ${v.problem}`)).toEqual([
        `cli/resume.ts: imports the provider adapters/store/jsonl-lock.ts: only the composition root (${[...COMPOSITION_ROOT].join(', ')}) imports adapters/`,
        `server/hub.ts: imports the provider adapters/store/jsonl.ts: only the composition root (${[...COMPOSITION_ROOT].join(', ')}) imports adapters/`,
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the check finds what it is for: an upward import, a machine doing I/O, a circle, a file in no layer', () => {
    const root = tempDir('bridle-layering-');
    const put = (f: string, text: string) => {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), text);
    };
    try {
      put('log/recorder.ts', "import type { X } from '../runtime/session.js';\n");
      put('runtime/session.ts', "export type X = 1;\n");
      put('machines/turn.machine.ts', "import { readFileSync } from 'node:fs';\nimport { b } from './b.js';\n");
      put('machines/b.ts', "import { t } from './turn.machine.js';\n");
      put('stray/x.ts', 'export {};\n');
      expect(checkLayering(root).map((v) => `${v.file}: ${v.problem}`)).toEqual([
        'log/recorder.ts: imports upward: log (0) → runtime (4) via runtime/session.ts',
        'machines/turn.machine.ts: a machine imports the I/O module node:fs',
        `stray/x.ts: lies in no layer of docs/design.md §1 (${Object.keys(LAYERS).join(', ')})`,
        'machines/b.ts: import circle: machines/b.ts → machines/turn.machine.ts → machines/b.ts',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    expect(LAYERS.log).toBeLessThan(LAYERS.ports!);
    expect(LAYERS.machines).toBeLessThan(LAYERS.runtime!);
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts']]);
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('actors/ holds the actors the machines invoke, and runtime/ no longer does (issue 24, ADR 0056)', () => {
    const moved = ['stream-model.ts', 'ask-approval.ts', 'budget-question.ts', 'compaction.ts', 'delegation.ts'];
    expect(LAYERS.actors).toBe(LAYERS.runtime);
    for (const f of moved) expect(existsSync(join(process.cwd(), 'actors', f)), `actors/${f}`).toBe(true);
    for (const f of ['stream-model.ts', 'ask-approval.ts', 'budget-question.ts', 'context/compaction.ts', 'subagents/delegation.ts'])
      expect(existsSync(join(process.cwd(), 'runtime', f)), `runtime/${f} is still there`).toBe(false);
  });

  it('executing a call and the agents of a workflow are actors, and actor logic is written in actors/ only (issue 24, ADR 0078)', () => {
    for (const f of ['execute-tool.ts', 'workflow-agents.ts']) expect(existsSync(join(process.cwd(), 'actors', f)), `actors/${f}`).toBe(true);
    expect(readFileSync(join(process.cwd(), 'runtime/workflow/tool.ts'), 'utf8'), 'the workflow tool runs its agents through actors/workflow-agents.ts').not.toMatch(/runDelegation/);
    expect(existsSync(join(process.cwd(), 'tools', 'execute.ts')), 'tools/execute.ts is still there').toBe(false);
    // Machines declare placeholders (`not-provided.ts`, a replay fold's no-op); the host's inline actors are ADR 0056's "left".
    const allowed = (f: string) => f.startsWith('actors/') || f.startsWith('machines/') || f === 'runtime/provide-machines.ts';
    const making = sourceFiles(process.cwd())
      .map((f) => f.split(sep).join('/'))
      .filter((f) => !allowed(f) && /\bfrom(Promise|Callback|Observable)\(/.test(readFileSync(join(process.cwd(), f), 'utf8')));
    expect(making).toEqual([]);
  });

  it('no module passes names through: only index.ts re-exports, every import names the module that defines the name (issue 24 item 5)', () => {
    expect(passThroughExports(process.cwd()).map((v) => `${v.file}: ${v.problem}`)).toEqual([]);
  });

  it('the pass-through check finds export * from, export { … } from, and an exported import, anywhere but index.ts', () => {
    const root = tempDir('bridle-reexports-');
    const put = (f: string, text: string) => {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), text);
    };
    try {
      put('index.ts', "export * from './log/entries.js';\nexport { a } from './log/a.js';\n");
      put('log/a.ts', 'export const a = 1;\nexport type A = 1;\n');
      put('log/entries.ts', "export * from './a.js';\nexport * as all from './a.js';\n");
      put('log/cost.ts', "export type { A } from './a.js';\nexport {\n  a,\n  type A as B,\n} from './a.js';\n");
      put('cli/serve.ts', "import { a as x } from '../log/a.js';\nimport type { A } from '../log/a.js';\nconst own = 2;\nexport { x, own };\nexport type { A };\n");
      put('test/helpers/h.ts', "export { a } from '../../log/a.js';\n");
      put('tools/ok.ts', "import { a } from '../log/a.js';\nconst b = a;\nexport { b };\n// export { a } from '../log/a.js' in a string: \"export { a } from './x.js'\"\n");
      expect(passThroughExports(root).map((v) => `${v.file}: ${v.problem}`)).toEqual([
        'cli/serve.ts: re-exports what it imports: x',
        'cli/serve.ts: re-exports what it imports: A',
        "log/cost.ts: re-exports: export type { A } from './a.js'",
        "log/cost.ts: re-exports: export { a, type A as B, } from './a.js'",
        "log/entries.ts: re-exports: export * from './a.js'",
        "log/entries.ts: re-exports: export * as all from './a.js'",
        "test/helpers/h.ts: re-exports: export { a } from '../../log/a.js'",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
