/** The session's system prompt comes from the registry and is logged as a request/header only when it changes. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const headers = (h: Harness) => h.entries().filter((e): e is EntryOf<'request/header'> => e.kind === 'request/header');

describe('the request header from the prompt registry', () => {
  it('holds the core, tools and workspace sections; is logged once while unchanged; again when a plugin adds a section or AGENTS.md changes', async () => {
    h = createHarness((_r, i) => (i % 2 === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'ok' }));
    fs.writeFileSync(path.join(h.workspace, 'AGENTS.md'), 'Use tabs.');
    await h.session.run('one');
    expect(headers(h)).toHaveLength(1);
    const system = headers(h)[0]!.system;
    expect(system).toMatch(/^You are a careful software engineer/);
    expect(system).toContain('- read_file: ');
    expect(system).toContain(`Workspace: ${h.workspace}`);
    expect(system).toContain('## AGENTS.md\nUse tabs.');
    expect(h.requests[0]!.request.system).toBe(system);

    await h.session.run('two');
    expect(headers(h)).toHaveLength(1);

    const off = h.session.prompt.add({ id: 'plugin', order: 300, template: 'Model {{model}} at depth {{depth}}.' });
    await h.session.run('three');
    expect(headers(h)).toHaveLength(2);
    expect(headers(h)[1]!.system.endsWith('Model scripted-test at depth 0.')).toBe(true);

    off();
    fs.writeFileSync(path.join(h.workspace, 'AGENTS.md'), 'Use spaces.');
    await h.session.run('four');
    expect(headers(h)).toHaveLength(3);
    expect(headers(h)[2]!.system).toContain('Use spaces.');
    expect(headers(h)[2]!.system).not.toContain('Model scripted-test');
  });

  it('a section referring to an unknown variable fails the step with a named error, not a silent blank', async () => {
    h = createHarness(() => ({ text: 'never' }));
    h.session.prompt.add({ id: 'typo', order: 1, template: 'Hello {{usr}}' });
    const out = await h.session.run('hi');
    expect(out).toMatchObject({ reason: 'error', code: 'REQUEST_BUILD_FAILED' });
    expect(h.requests).toHaveLength(0);
  });

  it('a fixed system prompt (replay) is used byte for byte', async () => {
    h = createHarness(() => ({ text: 'ok' }), { system: 'exactly {{this}}' });
    await h.session.run('hi');
    expect(headers(h)[0]!.system).toBe('exactly {{this}}');
  });
});
