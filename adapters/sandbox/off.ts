/** The `off` sandbox: confines nothing. Chosen only when asked for (`--sandbox off`). */
import { z } from 'zod';
import { SANDBOX, SESSION } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { Sandbox, SandboxService } from '../../ports/sandbox.js';

export function createOffSandbox(): Sandbox {
  return {
    id: 'off',
    confines: false,
    confine: (argv) => ({ argv: [...argv], finish: async () => [] }),
    describe: () => 'sandbox: off — shell commands run unconfined, with your permissions and network',
  };
}

export const offSandbox = defineProvider({
  seam: SANDBOX,
  name: 'off',
  config: z.strictObject({}),
  inject: [SESSION],
  create: (_c, services): SandboxService => ({ provider: createOffSandbox(), policy: { mode: 'full', workspace: services.get(SESSION).cwd, network: true } }),
});
