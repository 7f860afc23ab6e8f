/**
 * The log's ids are built and read in one module, `log/ids.ts` (issue 24): no other source file spells
 * the grammar by hand, neither building an id from its parts (`t${n}`, `${step}.c${k}`, `${turn}.budget${n}`,
 * `${parent}.${callId}`) nor slicing one apart (`lastIndexOf('.c')`, `callId.split('.')`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './layering.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const IDS_MODULE = 'log/ids.ts';

/** Hand-written id grammar: a turn, step, call, budget question or child session built in a template, or an id sliced at its dots. */
export const HAND_ID = [
  /`t\$\{/,
  /\}\.(s|c|a|r)\$\{/,
  /\.budget\$\{|\.budget`/,
  /\$\{[\w.]*\.id\}\.\$\{[\w.]*[cC]allId\}/,
  /lastIndexOf\('\.(s|c)'\)/,
  /\b(step|callId|turn)\.(split|indexOf|lastIndexOf)\('\.'\)/,
  /\.callId\.(split|slice|indexOf|lastIndexOf)\(/,
  /\b\w*[cC]allId\.slice\(\w*[cC]allId\.lastIndexOf\(/,
];

export function handWrittenIds(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (HAND_ID.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('architecture: the log ids have one grammar module', () => {
  it(`no source file but ${IDS_MODULE} builds or slices a turn, step, call or child-session id by hand`, () => {
    const files = sourceFiles(root).map((f) => f.split(path.sep).join('/'));
    expect(files).toContain(IDS_MODULE);
    const offending = files.filter((f) => f !== IDS_MODULE).flatMap((f) => handWrittenIds(readFileSync(path.join(root, f), 'utf8')).map((l) => `${f}:${l}`));
    expect(offending).toEqual([]);
  });

  it('the check catches the spellings it was written for, and leaves other templates alone', () => {
    const caught = [
      'turn: `t${context.turns}`,',
      'const step = `${turn}.s${n}`;',
      'callId: `${c.step}.c${i + 1}`,',
      'child: `${cfg.parent.id}.${callId}.a${++n}`,',
      'child: `${cfg.parent.id}.${ctx.callId}`,',
      'const id = `${s.id}.r${n}`;',
      'const q = `${turn}.budget${n}`;',
      "req.callId.startsWith(`${e.turn}.budget`)",
      "req.callId.slice(0, req.callId.lastIndexOf('.c'))",
      "Number(open.step.id.slice(open.step.id.lastIndexOf('.s') + 2))",
      "const turn = input.step.slice(0, step.indexOf('.'));",
      "${e.callId.split('.').pop()}",
      "const short = (callId: string) => callId.slice(callId.lastIndexOf('.') + 1);",
    ];
    expect(caught.filter((l) => handWrittenIds(l).length === 0)).toEqual([]);
    const left = ['`${id}.jsonl`', '`${evalId}.${task}.${run}`', "`${stamp}-${hex}`", "p.split('/')", '`tool ${name}`', "`${m.id}.${s}`"];
    expect(left.filter((l) => handWrittenIds(l).length > 0)).toEqual([]);
  });
});
