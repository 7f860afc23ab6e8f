import { describe, expect, it } from 'vitest';
import { decideUnderNever, type SessionConfinement } from './never.js';

const bwrap: SessionConfinement = { confines: true, mode: 'workspace-write', network: false, protectGit: true };
const reason = (d: ReturnType<typeof decideUnderNever>) => (d.kind === 'deny' ? /, ([A-Z_]+):/.exec(d.reason)?.[1] : d.kind);

describe('never decides by confinement, asking nobody (ADR 0052)', () => {
  it('runs bash under a confining sandbox, and refuses it with the sandbox off or in full mode', () => {
    const bash = { name: 'bash', rendered: 'grep -rl x .', confinement: 'sandbox' as const };
    expect(reason(decideUnderNever(bash, bwrap))).toBe('allow');
    expect(reason(decideUnderNever(bash, { ...bwrap, mode: 'read-only' }))).toBe('allow');
    expect(reason(decideUnderNever(bash, { ...bwrap, confines: false, mode: 'full', network: true }))).toBe('SANDBOX_OFF');
    expect(reason(decideUnderNever(bash, { ...bwrap, mode: 'full' }))).toBe('FULL_MODE');
  });

  it('runs a file write inside the workspace, and refuses one outside it or into .git unless git writes are allowed', () => {
    const write = (rendered: string) => ({ name: 'write_file', rendered, confinement: 'workspace' as const });
    expect(reason(decideUnderNever(write('src/a.ts'), bwrap))).toBe('allow');
    expect(reason(decideUnderNever(write('/etc/passwd'), bwrap))).toBe('OUTSIDE_WORKSPACE');
    expect(reason(decideUnderNever(write('../x'), bwrap))).toBe('OUTSIDE_WORKSPACE');
    expect(reason(decideUnderNever(write('.git/hooks/pre-commit'), bwrap))).toBe('GIT_WRITE');
    expect(reason(decideUnderNever(write('vendor/lib/.GIT/config'), bwrap))).toBe('GIT_WRITE');
    expect(reason(decideUnderNever(write('.git/hooks/pre-commit'), { ...bwrap, protectGit: false }))).toBe('allow');
    expect(reason(decideUnderNever(write('.gitignore'), bwrap))).toBe('allow');
  });

  it('runs a network tool only when the network is on; refuses a tool with no confinement story, with its own reason', () => {
    const fetch = { name: 'fetch_url', rendered: '{}', confinement: 'network' as const };
    expect(reason(decideUnderNever(fetch, bwrap))).toBe('NETWORK_OFF');
    expect(reason(decideUnderNever(fetch, { ...bwrap, network: true }))).toBe('allow');
    const mcp = { name: 'mcp__s__x', rendered: '{}', writeReason: 'mcp__s__x is a tool of the MCP server mcp:s, which runs outside the sandbox' };
    const d = decideUnderNever(mcp, bwrap);
    expect(reason(d)).toBe('NO_CONFINEMENT');
    expect(d.kind === 'deny' && d.reason).toContain('runs outside the sandbox');
    expect(reason(decideUnderNever({ name: 'bash', rendered: 'ls', confinement: 'sandbox' }, undefined))).toBe('NO_CONFINEMENT');
  });
});
