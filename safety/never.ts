/**
 * What `never` decides without asking anyone (ADR 0052): a call the
 * session's confinement holds runs; a call that would need more than it gives
 * is refused, and the reason names what is missing, so the model can tell
 * "not here" from "not now".
 *
 *   sandbox    (bash)                    runs under a confining sandbox in read-only or workspace-write mode;
 *                                        refused with the sandbox `off` (SANDBOX_OFF) or in `full` mode (FULL_MODE)
 *   workspace  (write_file, edit_file)   runs for a path inside the workspace; refused outside it
 *                                        (OUTSIDE_WORKSPACE) and inside `.git` unless git writes are allowed (GIT_WRITE)
 *   network    (a tool that reaches the  runs when the session's network is on; refused when it is off (NETWORK_OFF)
 *               network from the harness)
 *   none       (an MCP tool without a    refused (NO_CONFINEMENT): nothing bounds what it does
 *               trusted hint, a plugin's tool that says nothing)
 *
 * Read-only calls and delegations never get here (`decideByPolicy`).
 */
import { codes, type CodeOf } from '../log/codes.js';
import type { Decision } from '../ports/approval.js';
import type { ToolConfinement } from '../ports/tools.js';
import type { SandboxMode } from '../ports/sandbox.js';

/** What the session's confinement gives, as `never` reads it: the sandbox service's provider and policy, flattened. */
export interface SessionConfinement {
  /** False for the `off` sandbox. */
  confines: boolean;
  mode: SandboxMode;
  network: boolean;
  /** False only when the policy says `.git` may be written (`gitWritable`); unknown counts as protected. */
  protectGit?: boolean;
}

/** Why the policy `never` refused a call: the code its denial's reason names. */
export const NeverRefusal = codes({
  SANDBOX_OFF: 'The sandbox is off, so the call would run unconfined.',
  FULL_MODE: 'The sandbox is in full mode, so the call could write anywhere the user can.',
  OUTSIDE_WORKSPACE: 'The call writes outside the workspace.',
  GIT_WRITE: 'The call writes inside .git, which only the user can allow.',
  NETWORK_OFF: 'The call reaches the network, and the session\'s network is off.',
  NO_CONFINEMENT: 'Nothing says what confines the call, so nothing bounds it.',
});
export type NeverRefusal = CodeOf<typeof NeverRefusal>;

export interface NeverCall {
  name: string;
  /** What rules match: the command for bash, the normalized workspace-relative path for file tools. */
  rendered: string;
  confinement?: ToolConfinement;
  writeReason?: string;
}

const refuse = (code: NeverRefusal, why: string): Decision => ({
  kind: 'deny',
  reason: `approval policy "never" (nobody is asked) refuses it, ${code}: ${why}`,
});

/** A rendered path that leaves the workspace: absolute (outside it, or renderForRules would have made it relative) or climbing above it. */
const leavesWorkspace = (p: string) => p.startsWith('/') || p === '..' || p.startsWith('../');
const inGit = (p: string) => p.split('/').some((part) => part.toLowerCase() === '.git');

/**
 * Contract: pure. `allow` for a call `session` confines, else a `deny` whose
 * reason starts with the policy and names one of `NeverRefusal`. Without a
 * confinement to lean on (`session` undefined), every call is `NO_CONFINEMENT`.
 */
export function decideUnderNever(call: NeverCall, session: SessionConfinement | undefined): Decision {
  const kind = call.confinement;
  if (kind === undefined || session === undefined) {
    const why = call.writeReason ?? `${call.name} says nothing of what confines it`;
    return refuse(NeverRefusal.NO_CONFINEMENT, `${why}, so nothing bounds what it would do`);
  }
  switch (kind) {
    case 'sandbox':
      if (!session.confines) return refuse(NeverRefusal.SANDBOX_OFF, `the sandbox is off, so ${call.name} would run unconfined, with the user's permissions and network`);
      if (session.mode === 'full') return refuse(NeverRefusal.FULL_MODE, `the sandbox is in full mode, so ${call.name} could write anywhere the user can`);
      return { kind: 'allow' };
    case 'workspace':
      if (leavesWorkspace(call.rendered)) return refuse(NeverRefusal.OUTSIDE_WORKSPACE, `${call.rendered} is outside the workspace`);
      if (inGit(call.rendered) && session.protectGit !== false) return refuse(NeverRefusal.GIT_WRITE, `${call.rendered} is inside .git, which only the user can allow to be written (--allow-git-writes)`);
      return { kind: 'allow' };
    case 'network':
      if (!session.network) return refuse(NeverRefusal.NETWORK_OFF, `${call.name} reaches the network, and the session's network is off`);
      return { kind: 'allow' };
  }
}
