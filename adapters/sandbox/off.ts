/** The `off` sandbox: confines nothing. Chosen only when asked for (`--sandbox off`). */
import type { Sandbox } from '../../safety/sandbox.js';

export function createOffSandbox(): Sandbox {
  return {
    id: 'off',
    confines: false,
    confine: (argv) => ({ argv: [...argv], finish: async () => [] }),
    describe: () => 'sandbox: off — shell commands run unconfined, with your permissions and network',
  };
}
