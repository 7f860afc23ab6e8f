/**
 * In the sandbox's `read-only` mode, a tool that writes through the harness
 * itself (write_file, edit_file) would slip past the sandbox, which only
 * confines shell commands. This guard denies those; shell tools still run,
 * confined read-only, and a delegation too (its child inherits this sandbox). Under any other sandbox mode the row registers nothing.
 */
import { z } from 'zod';
import { HOOKS, SANDBOX } from '../../ports/index.js';
import type { Plugin } from '../host.js';

export const readOnlyModePlugin: Plugin<{ shellTools: string[] }> = {
  name: 'read-only-mode',
  inject: [HOOKS, SANDBOX],
  config: z.strictObject({ shellTools: z.array(z.string().min(1)).default(['bash']) }),
  apply(ctx, c) {
    const sandbox = ctx.get(SANDBOX);
    if (!sandbox.provider.confines || sandbox.policy.mode !== 'read-only') return;
    const shellTools = new Set(c.shellTools);
    ctx.hooks.guard((call) =>
      call.readOnly || call.delegates || shellTools.has(call.name)
        ? undefined
        : { kind: 'deny', reason: `the sandbox is read-only, so ${call.name} may not change files (pass --sandbox-mode workspace-write to allow it)` },
    );
  },
};
