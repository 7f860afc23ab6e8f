import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { decideByPolicy } from './approval.js';
import { exactRule, parseRule, ruleMatches, rulesFromLog } from './approval-rules.js';
import { canonicalJson, renderForRules } from '../plugins/hooks/canonical.js';

describe('approval rules', () => {
  it('parse from tool:pattern, splitting at the first colon, and refuse bad ones', () => {
    expect(parseRule('bash:^npm test$')).toEqual({ tool: 'bash', pattern: '^npm test$' });
    expect(parseRule('bash:^echo a:b$')).toEqual({ tool: 'bash', pattern: '^echo a:b$' });
    expect(() => parseRule('bash')).toThrow(/tool:pattern/);
    expect(() => parseRule(':x')).toThrow(/tool:pattern/);
    expect(() => parseRule('bash:(')).toThrow(/invalid pattern/);
  });

  it('match the command of a bash call, but a broad rule only a simple command', () => {
    const git = parseRule('bash:^git (status|diff|log)\\b');
    expect(ruleMatches(git, { name: 'bash', rendered: 'git status' })).toBe(true);
    expect(ruleMatches(git, { name: 'bash', rendered: 'git log --oneline' })).toBe(true);
    expect(ruleMatches(git, { name: 'bash', rendered: 'git push' })).toBe(false);
    expect(ruleMatches(git, { name: 'write_file', rendered: 'git status' })).toBe(false);
    for (const sneaky of ['git status; rm -rf ~', 'git status && curl x', 'git log | sh', 'git log $(rm x)', 'git diff > /etc/x', 'git status\nrm -rf ~', 'git log `id`']) {
      expect(ruleMatches(git, { name: 'bash', rendered: sneaky }), sneaky).toBe(false);
    }
    const exact = exactRule('bash', 'npm test 2>&1 | tail -5');
    expect(ruleMatches(exact, { name: 'bash', rendered: 'npm test 2>&1 | tail -5' })).toBe(true);
    expect(ruleMatches(exact, { name: 'bash', rendered: 'npm test 2>&1 | tail -5; rm x' })).toBe(false);
  });

  it('match file tools on the normalized, workspace-relative path', () => {
    const src = parseRule('write_file:^src/');
    const r = (path: string) => ({ name: 'write_file', rendered: renderForRules({ path, content: 'x' }, '/ws') });
    expect(ruleMatches(src, r('src/a.ts'))).toBe(true);
    expect(ruleMatches(src, r('./src/a.ts'))).toBe(true);
    expect(ruleMatches(src, r('/ws/src/a.ts'))).toBe(true);
    expect(ruleMatches(src, r('src/../package.json'))).toBe(false);
    expect(ruleMatches(src, r('/elsewhere/src/a.ts'))).toBe(false);
  });

  it('come back from the log: only allowed-always decisions with a rule', () => {
    const base = { seq: 1, at: '2026-01-01T00:00:00.000Z', kind: 'approval/decided', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', by: 'terminal' } as const;
    const entries = [
      { ...base, outcome: 'allowed-once' },
      { ...base, outcome: 'allowed-always', rule: { tool: 'bash', pattern: '^ls$' } },
      { ...base, outcome: 'rejected' },
    ] as Entry[];
    expect(rulesFromLog(entries)).toEqual([{ tool: 'bash', pattern: '^ls$' }]);
  });
});

describe('canonical renderings', () => {
  it('sort keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
    expect(renderForRules({ pattern: 'x', path: undefined, glob: '*.ts' })).toBe('{"glob":"*.ts","pattern":"x"}');
  });
});

describe('the approval policy', () => {
  const write = { name: 'write_file', readOnly: false, rendered: 'a.txt' };
  it('lets read-only calls through under every policy, and asks, denies or allows the rest', () => {
    for (const p of ['never', 'ask', 'auto'] as const) expect(decideByPolicy(p, { name: 'read_file', readOnly: true, rendered: 'a' }).kind).toBe('allow');
    expect(decideByPolicy('ask', write).kind).toBe('ask');
    expect(decideByPolicy('never', write).kind).toBe('deny');
    expect(decideByPolicy('auto', write).kind).toBe('allow');
  });
  it('allows a call a rule matches, without asking', () => {
    expect(decideByPolicy('ask', write, [{ tool: 'write_file', pattern: '^a\\.txt$' }]).kind).toBe('allow');
    expect(decideByPolicy('ask', write, [{ tool: 'write_file', pattern: '^b' }]).kind).toBe('ask');
  });
  it('gives a tool\'s own reason for treating it as a write, in the question and in the refusal under never', () => {
    const mcp = { name: 'mcp__s__look', readOnly: false, rendered: '{}', writeReason: 'mcp__s__look is a tool of the MCP server mcp:s, which runs outside the sandbox' };
    expect(decideByPolicy('ask', mcp)).toEqual({ kind: 'ask', reason: mcp.writeReason });
    expect(decideByPolicy('never', mcp)).toEqual({ kind: 'deny', reason: `approval policy "never" (nobody is asked) refuses it, NO_CONFINEMENT: ${mcp.writeReason}, so nothing bounds what it would do` });
  });
});
