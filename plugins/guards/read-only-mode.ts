/**
 * In the sandbox's `read-only` mode, a tool that writes through the harness
 * itself (write_file, edit_file) would slip past the sandbox, which only
 * confines shell commands. This guard denies those; shell tools still run,
 * confined read-only.
 */
import type { Plugin } from '../hooks/registry.js';

export function readOnlyModePlugin(o: { shellTools?: readonly string[] } = {}): Plugin {
  const shellTools = new Set(o.shellTools ?? ['bash']);
  return {
    name: 'read-only-mode',
    setup(api) {
      api.guard((call) =>
        call.readOnly || shellTools.has(call.name)
          ? undefined
          : { kind: 'deny', reason: `the sandbox is read-only, so ${call.name} may not change files (pass --sandbox-mode workspace-write to allow it)` },
      );
    },
  };
}
