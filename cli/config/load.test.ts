import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { loadConfig, parseConfig } from './load.js';
import { tempDir } from '../../test/helpers/temp.js';

const F = '/h/config.yaml';
const problem = (text: string): string => {
  try {
    parseConfig(text, F);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    const m = (err as Error).message;
    expect(m).not.toContain('\n');
    return m;
  }
  throw new Error('expected the config to be refused');
};

describe('parseConfig', () => {
  it('reads every setting and profiles', () => {
    const c = parseConfig(
      [
        'model: gpt-4o-mini',
        'baseUrl: http://127.0.0.1:8080/v1',
        'approval: auto',
        'allow: ["bash:^npm test$", "read_file:.*"]',
        'sandbox: bwrap',
        'sandboxMode: read-only',
        'allowNetwork: true',
        'maxSteps: 20',
        'contextWindow: 64000',
        'contextWindows: { gpt-4o-mini: 128000 }',
        'profiles:',
        '  local: { model: qwen, baseUrl: "http://127.0.0.1:11434/v1" }',
      ].join('\n'),
      F,
    );
    expect(c).toMatchObject({ model: 'gpt-4o-mini', approval: 'auto', allow: ['bash:^npm test$', 'read_file:.*'], allowNetwork: true, maxSteps: 20, contextWindows: { 'gpt-4o-mini': 128000 } });
    expect(c.profiles?.local).toEqual({ model: 'qwen', baseUrl: 'http://127.0.0.1:11434/v1' });
  });

  it('an empty file, or one of comments only, is an empty config', () => {
    expect(parseConfig('', F)).toEqual({});
    expect(parseConfig('# nothing yet\n', F)).toEqual({});
  });

  it('an unknown key names the file, the key and the known ones', () => {
    expect(problem('modle: gpt-4o\n')).toBe(`${F}: modle: unknown key (known: model, provider, maxOutputTokens, reasoningEffort, thinkingBudget, baseUrl, approval, allow, sandbox, sandboxMode, allowNetwork, allowGitWrites, sandboxLimits, maxSteps, budget, contextWindow, contextWindows, streamIdleMs, streamTotalMs, store, leaseMs, patch, profiles)`);
    expect(problem('profiles:\n  fast:\n    maxStep: 3\n')).toMatch(/^\/h\/config.yaml: profiles\.fast\.maxStep: unknown key \(known in a profile: bundles, patch, model, /);
    // Profiles do not nest.
    expect(problem('profiles:\n  a:\n    profiles: {}\n')).toContain('profiles.a.profiles: unknown key');
  });

  it('a bad value names the key, the rule and what it got', () => {
    expect(problem('maxSteps: -1\n')).toBe(`${F}: maxSteps: must be a positive whole number (got -1)`);
    expect(problem('approval: sometimes\n')).toBe(`${F}: approval: must be never, ask or auto (got "sometimes")`);
    expect(problem('contextWindow: 100\n')).toBe(`${F}: contextWindow: must be a whole number of tokens, at least 1024 (got 100)`);
    expect(problem('allowGitWrites: yes please\n')).toBe(`${F}: allowGitWrites: must be true or false (got "yes please")`);
    expect(problem('sandboxLimits: { processes: 2 }\n')).toMatch(/^\/h\/config.yaml: sandboxLimits.processes: must map processes \(at least 16\)/);
    expect(problem('sandboxLimits: { cpus: 2 }\n')).toBe(`${F}: sandboxLimits.cpus: unknown key (${'must map processes (at least 16), memoryMb (at least 64) and tmpMb (at least 1) to whole numbers'})`);
    expect(problem('baseUrl: not a url\n')).toBe(`${F}: baseUrl: must be a URL, e.g. http://127.0.0.1:8080/v1 (got "not a url")`);
    expect(problem('allowNetwork: "yes"\n')).toBe(`${F}: allowNetwork: must be true or false (got "yes")`);
    expect(problem('contextWindows: { gpt-4o: lots }\n')).toContain('contextWindows.gpt-4o: must map model ids');
    expect(problem('profiles:\n  fast:\n    sandbox: none\n')).toBe(`${F}: profiles.fast.sandbox: must be bwrap or off (got "none")`);
  });

  it('allow rules are checked as --allow checks them', () => {
    expect(problem('allow: [bash]\n')).toBe(`${F}: allow.0: must be a list of tool:pattern rules, e.g. 'bash:^npm test$' (got "bash")`);
    expect(problem('allow: ["bash:("]\n')).toMatch(/^\/h\/config.yaml: allow\.0: approval rule for bash: invalid pattern "\("/);
    expect(problem('allow: "bash:.*"\n')).toContain('allow: must be a list of tool:pattern rules');
  });

  it('counts the problems it does not show', () => {
    expect(problem('maxSteps: 0\napproval: x\n')).toMatch(/\(and 1 more problem\)$/);
  });

  it('YAML that does not parse, or is not a mapping, is one line too', () => {
    expect(problem('model: [gpt\n')).toMatch(/^\/h\/config.yaml: not valid YAML: line \d+, column \d+: Flow sequence/);
    expect(problem('model: a\nmodel: b\n')).toMatch(/not valid YAML: .*Map keys must be unique/);
    expect(problem('- model: a\n')).toBe(`${F}: expected a mapping of settings (key: value lines) at the top level`);
  });
});

describe('loadConfig', () => {
  it('reads $BRIDLE_HOME/config.yaml, and a missing one is an empty config', () => {
    const home = tempDir('bridle-config-');
    expect(loadConfig(home)).toEqual({ path: join(home, 'config.yaml'), exists: false, config: {} });
    writeFileSync(join(home, 'config.yaml'), 'maxSteps: 7\n');
    expect(loadConfig(home)).toEqual({ path: join(home, 'config.yaml'), exists: true, config: { maxSteps: 7 } });
  });

  it('a config.yaml that is a directory is a clear error, not a crash', () => {
    const home = tempDir('bridle-config-');
    mkdirSync(join(home, 'config.yaml'));
    expect(() => loadConfig(home)).toThrow(/config\.yaml: cannot read it: /);
  });
});
