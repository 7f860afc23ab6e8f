import { describe, expect, it } from 'vitest';
import { asFlags } from './apply.js';
import { dumpJson, dumpOf, dumpYaml } from './dump.js';
import type { LoadedConfig } from './load.js';
import { parseConfig } from './load.js';
import { resolveConfig } from './resolve.js';

const F = '/h/config.yaml';
const file = (text: string): LoadedConfig => ({ path: F, exists: true, config: parseConfig(text, F) });
const none: LoadedConfig = { path: F, exists: false, config: {} };

const CONFIG = file(
  [
    'model: file-model',
    'approval: never',
    'maxSteps: 30',
    'allow: ["bash:^ls$"]',
    'contextWindows: { file-model: 50000, shared: 60000 }',
    'profiles:',
    '  fast: { model: profile-model, maxSteps: 5, allow: [], contextWindows: { shared: 70000 } }',
    '  lax: { approval: auto, sandbox: "off" }',
  ].join('\n'),
);

describe('resolveConfig: precedence flag > env > profile > file > default', () => {
  it('with nothing set, every value is the default', () => {
    const r = resolveConfig({}, none, {});
    expect(r.values).toEqual({ model: undefined, baseUrl: 'https://api.openai.com/v1', approval: 'ask', allow: [], sandbox: 'bwrap', sandboxMode: 'workspace-write', allowNetwork: false, allowGitWrites: false, sandboxLimits: { processes: 512, memoryMb: 4096, tmpMb: 1024 }, maxSteps: 100, contextWindow: undefined, contextWindows: {}, streamIdleMs: 300_000, streamTotalMs: 1_800_000 });
    expect(new Set(Object.values(r.sources))).toEqual(new Set(['default']));
  });

  it('the file beats the default', () => {
    const r = resolveConfig({}, CONFIG, {});
    expect(r.values).toMatchObject({ model: 'file-model', approval: 'never', maxSteps: 30, allow: ['bash:^ls$'] });
    expect(r.sources).toMatchObject({ model: 'file', approval: 'file', maxSteps: 'file', allow: 'file', sandbox: 'default' });
  });

  it('the profile beats the file, and its empty allow list replaces the file\'s', () => {
    const r = resolveConfig({ profile: 'fast' }, CONFIG, {});
    expect(r.values).toMatchObject({ model: 'profile-model', maxSteps: 5, allow: [], approval: 'never' });
    expect(r.sources).toMatchObject({ model: 'profile', maxSteps: 'profile', allow: 'profile', approval: 'file' });
  });

  it('the environment beats the profile, a flag beats the environment', () => {
    const env = { BRIDLE_MODEL: 'env-model', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    const r = resolveConfig({ profile: 'fast' }, CONFIG, env);
    expect([r.values.model, r.sources.model, r.values.baseUrl, r.sources.baseUrl]).toEqual(['env-model', 'env', 'http://127.0.0.1:9/v1', 'env']);
    const f = resolveConfig({ profile: 'fast', model: 'flag-model', maxSteps: '9', allow: ['read_file:.*'], approval: 'ask' }, CONFIG, env);
    expect(f.values).toMatchObject({ model: 'flag-model', maxSteps: 9, allow: ['read_file:.*'], approval: 'ask' });
    expect(f.sources).toMatchObject({ model: 'flag', maxSteps: 'flag', allow: 'flag', approval: 'flag' });
  });

  it('an empty environment variable counts as unset', () => {
    expect(resolveConfig({}, CONFIG, { BRIDLE_MODEL: '' }).sources.model).toBe('file');
  });

  it('a bad flag, environment value or profile name is a usage error', () => {
    expect(() => resolveConfig({ maxSteps: 'many' }, none, {})).toThrow('--max-steps must be a positive whole number');
    expect(() => resolveConfig({ approval: 'maybe' }, none, {})).toThrow('--approval must be never, ask or auto');
    expect(() => resolveConfig({}, none, { OPENAI_BASE_URL: 'nope' })).toThrow('OPENAI_BASE_URL: not a URL: nope');
    expect(() => resolveConfig({ profile: 'slow' }, CONFIG, {})).toThrow('--profile slow: no such profile in /h/config.yaml; profiles: fast, lax');
    expect(() => resolveConfig({ profile: 'x' }, none, {})).toThrow('(there is no such file)');
    // Not a prototype key either.
    expect(() => resolveConfig({ profile: 'constructor' }, CONFIG, {})).toThrow('no such profile');
  });
});

describe('context windows', () => {
  it('contextWindows is merged per model, profile over file, and looked up for the effective model', () => {
    const r = resolveConfig({ profile: 'fast', model: 'shared' }, CONFIG, {});
    expect(r.values.contextWindows).toEqual({ 'file-model': 50000, shared: 70000 });
    expect([r.values.contextWindow, r.sources.contextWindow, r.windowFromMap]).toEqual([70000, 'profile', true]);
    // Left to openSession, which knows the model the session really runs.
    expect(asFlags(r)).toMatchObject({ contextWindow: undefined, contextWindows: { shared: 70000 } });
  });

  it('a contextWindow setting beats the map; the built-in table is the default', () => {
    const r = resolveConfig({ contextWindow: '2048' }, CONFIG, {});
    expect([r.values.contextWindow, r.sources.contextWindow]).toEqual([2048, 'flag']);
    expect(asFlags(r).contextWindow).toBe('2048');
    const known = resolveConfig({ model: 'gpt-4o' }, none, {});
    expect([known.values.contextWindow, known.sources.contextWindow, known.notes.contextWindow]).toEqual([128000, 'default', 'known for gpt-4o']);
    expect(asFlags(known).contextWindow).toBeUndefined();
  });
});

describe('sandbox and sandboxMode', () => {
  it('a sandboxMode from config is ignored, and said to be, when the sandbox is off', () => {
    const r = resolveConfig({ sandbox: 'off' }, file('sandboxMode: read-only\n'), {});
    expect([r.values.sandboxMode, r.notes.sandboxMode]).toEqual(['workspace-write', 'ignored: sandbox is off']);
    expect(asFlags(r)).toMatchObject({ sandbox: 'off', sandboxMode: undefined });
  });

  it('--sandbox-mode with a sandbox the config turned off is a usage error naming where', () => {
    expect(() => resolveConfig({ profile: 'lax', sandboxMode: 'full' }, CONFIG, {})).toThrow('--sandbox-mode needs the bwrap sandbox, but sandbox is off (from profile lax in /h/config.yaml)');
  });
});

describe('the sandbox settings', () => {
  it('allowGitWrites: a flag beats the file either way; sandboxLimits: what a layer sets, the rest from the defaults', () => {
    expect(resolveConfig({}, file('allowGitWrites: true\n'), {}).values.allowGitWrites).toBe(true);
    expect(resolveConfig({ allowGitWrites: false }, file('allowGitWrites: true\n'), {}).values.allowGitWrites).toBe(false);
    const r = resolveConfig({}, file('sandboxLimits: { processes: 64 }\n'), {});
    expect(r.values.sandboxLimits).toEqual({ processes: 64, memoryMb: 4096, tmpMb: 1024 });
    expect(r.sources.sandboxLimits).toBe('file');
    expect(asFlags(r)).toMatchObject({ allowGitWrites: false, sandboxLimits: { processes: 64, memoryMb: 4096, tmpMb: 1024 } });
  });
});

describe('asFlags', () => {
  it('renders every value in the flag form the commands parse', () => {
    const r = resolveConfig({}, file('allowNetwork: true\nmaxSteps: 12\ncontextWindow: 9000\n'), {});
    expect(asFlags(r)).toEqual({ model: undefined, baseUrl: 'https://api.openai.com/v1', approval: 'ask', allow: [], sandbox: 'bwrap', sandboxMode: 'workspace-write', allowNetwork: true, allowGitWrites: false, sandboxLimits: { processes: 512, memoryMb: 4096, tmpMb: 1024 }, maxSteps: '12', contextWindow: '9000', contextWindows: {}, streamIdleMs: '300000', streamTotalMs: '1800000' });
  });

  it('resume: a model from the file or the default gives way to the logged one; a flag, env or profile model does not', () => {
    expect(asFlags(resolveConfig({}, CONFIG, {}), { keepLoggedModel: true }).model).toBeUndefined();
    expect(asFlags(resolveConfig({ profile: 'fast' }, CONFIG, {}), { keepLoggedModel: true }).model).toBe('profile-model');
    expect(asFlags(resolveConfig({}, CONFIG, { BRIDLE_MODEL: 'e' }), { keepLoggedModel: true }).model).toBe('e');
  });
});

describe('config --dump', () => {
  it('YAML: every key with its source as a comment, notes in brackets', () => {
    const y = dumpYaml(resolveConfig({ profile: 'fast', maxSteps: '3' }, CONFIG, { BRIDLE_MODEL: 'gpt-4o' }));
    expect(y).toBe(
      [
        '# the effective bridle configuration: flag > env > profile > file > default',
        '# config file: /h/config.yaml',
        '# profile: fast',
        '',
        'model: gpt-4o # env',
        'baseUrl: https://api.openai.com/v1 # default',
        'approval: never # file',
        'allow: # profile',
        '  []',
        'sandbox: bwrap # default',
        'sandboxMode: workspace-write # default',
        'allowNetwork: false # default',
        'allowGitWrites: false # default',
        'sandboxLimits: # default',
        '  processes: 512',
        '  memoryMb: 4096',
        '  tmpMb: 1024',
        'maxSteps: 3 # flag',
        'contextWindow: 128000 # default (known for gpt-4o)',
        'contextWindows: # profile',
        '  file-model: 50000',
        '  shared: 70000',
        'streamIdleMs: 300000 # default',
        'streamTotalMs: 1800000 # default',
        '',
      ].join('\n'),
    );
  });

  it('JSON: value, source and note per key; no model is null with a hint', () => {
    const d = JSON.parse(dumpJson(resolveConfig({}, none, {})));
    expect(d).toMatchObject({ file: F, fileExists: false, profile: null });
    expect(d.settings.model).toEqual({ value: null, source: 'default', note: expect.stringContaining('pass --model') });
    expect(d.settings.maxSteps).toEqual({ value: 100, source: 'default' });
    expect(Object.keys(d.settings)).toEqual(Object.keys(dumpOf(resolveConfig({}, none, {})).settings));
  });
});
