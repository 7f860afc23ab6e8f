/**
 * The subprocess seam: `resolve(request) → spec` fills every default in one
 * visible place, from the provider's config; `run(spec)` runs that spec and
 * nothing else.
 */
import { describe, expect, it } from 'vitest';
import { SANDBOX, SUBPROCESS } from '../../ports/index.js';
import type { ProviderDefinition } from '../../ports/provider.js';
import { keyId, type KeyLike, type ServiceLookup } from '../../ports/service.js';
import type { Subprocess, SubprocessRequest } from '../../ports/subprocess.js';
import type { Launch, Launcher } from '../../safety/sandbox.js';
import type { SandboxService } from '../../ports/sandbox.js';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_OUTPUT_BYTES } from '../../tools/bash.js';
import { createBwrapSandbox } from '../sandbox/bwrap.js';
import { createOffSandbox } from '../sandbox/off.js';
import { createLocalSubprocess, LocalSubprocessConfig, localSubprocessProvider } from './local.js';
import { memorySubprocessProvider } from './memory.js';

/** A host's lookup holding only the sandbox seam's service. */
const withSandbox = (service: SandboxService): ServiceLookup => ({
  get: <T>(key: KeyLike) => {
    if (keyId(key) !== 'sandbox') throw new Error(`no service ${keyId(key)}`);
    return service as T;
  },
  has: (key) => keyId(key) === 'sandbox',
  onDispose: () => {},
});
const bwrap: SandboxService = { provider: createBwrapSandbox(), policy: { mode: 'workspace-write', workspace: '/work/ws', network: false } };
const mount = (p: ProviderDefinition<Subprocess, any>, config: unknown, services = withSandbox(bwrap)) => p.create(p.config.parse(config), services);

const request: SubprocessRequest = { argv: ['bash', '-c', 'npm test'] };

describe('the subprocess seam', () => {
  it('two provider configs with different default timeouts produce two different resolved specs from an identical request', () => {
    const quick = mount(localSubprocessProvider, { timeoutMs: 5_000 }).resolve(request);
    const patient = mount(localSubprocessProvider, { timeoutMs: 300_000 }).resolve(request);
    expect(quick.timeoutMs).toBe(5_000);
    expect(patient.timeoutMs).toBe(300_000);
    expect(quick).not.toEqual(patient);
    expect({ ...quick, timeoutMs: 0 }).toEqual({ ...patient, timeoutMs: 0 });
    // The same holds of the memory provider: its config, not the consumer, owns the defaults.
    expect(mount(memorySubprocessProvider, { timeoutMs: 7 }).resolve(request).timeoutMs).toBe(7);
    expect(mount(memorySubprocessProvider, {}).resolve(request).timeoutMs).toBe(120_000);
  });

  it('resolve fills every default, visibly: timeout, output cap, cwd, the environment less secrets, the confinement the sandbox applies', () => {
    const local = createLocalSubprocess({ sandbox: bwrap.provider, policy: bwrap.policy, env: { PATH: '/bin', HOME: '/home/u', OPENAI_API_KEY: 'sk-secret', GITHUB_TOKEN: 'ghp' } });
    expect(local.resolve(request)).toEqual({
      argv: ['bash', '-c', 'npm test'],
      cwd: '/work/ws',
      timeoutMs: 120_000,
      maxOutputBytes: 64 * 1024,
      env: { PATH: '/bin', HOME: '/home/u' },
      sandbox: { by: 'bwrap', mode: 'workspace-write', network: false },
    });
    // What the request sets is kept; secrets are stripped from an environment it brings, too.
    expect(local.resolve({ ...request, cwd: '/work/ws/pkg', timeoutMs: 9, maxOutputBytes: 10, env: { A: '1', NPM_TOKEN: 'x' } })).toMatchObject({
      cwd: '/work/ws/pkg', timeoutMs: 9, maxOutputBytes: 10, env: { A: '1' },
    });
    // `off` confines nothing, and the spec says so.
    expect(createLocalSubprocess({ sandbox: createOffSandbox(), policy: bwrap.policy }).resolve(request).sandbox).toEqual({ by: 'off', mode: 'full', network: true });
    expect(createLocalSubprocess({ sandbox: bwrap.provider, policy: { ...bwrap.policy, mode: 'read-only', network: true } }).resolve(request).sandbox).toEqual({ by: 'bwrap', mode: 'read-only', network: true });
  });

  it('run launches exactly the spec it is given, and refuses one that states another confinement than its sandbox applies', async () => {
    const seen: Launch[] = [];
    const launcher: Launcher = async (l) => (seen.push(l), { exitCode: 0, signal: null, stdout: 'ran\n', stderr: '', timedOut: false, truncatedBytes: 0 });
    const local = createLocalSubprocess({ sandbox: createOffSandbox(), policy: { mode: 'full', workspace: '/w', network: true }, launcher });
    const spec = local.resolve({ argv: ['make'], timeoutMs: 42 });
    const signal = new AbortController().signal;
    expect(await local.run(spec, signal)).toMatchObject({ exitCode: 0, stdout: 'ran\n' });
    expect(seen).toEqual([{ argv: ['make'], cwd: '/w', timeoutMs: 42, maxOutputBytes: 64 * 1024, env: spec.env, signal }]);
    await expect(local.run({ ...spec, sandbox: { by: 'off', mode: 'read-only', network: false } }, signal)).rejects.toMatchObject({ code: 'INVALID_SPEC' });
    expect(seen).toHaveLength(1);
  });

  it('the bash tool’s description states the local provider’s defaults', () => {
    expect(LocalSubprocessConfig.parse({})).toEqual({ timeoutMs: BASH_DEFAULT_TIMEOUT_MS, maxOutputBytes: BASH_MAX_OUTPUT_BYTES });
  });

  it('the local provider provides the subprocess seam, confined by the sandbox service it injects', () => {
    expect(localSubprocessProvider.seam).toBe(SUBPROCESS);
    expect(localSubprocessProvider.inject).toEqual([SANDBOX]);
    expect(mount(localSubprocessProvider, {}).id).toBe('bwrap(local)');
    expect(mount(localSubprocessProvider, {}, withSandbox({ ...bwrap, provider: createOffSandbox() })).id).toBe('local');
    expect(() => mount(localSubprocessProvider, { timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
