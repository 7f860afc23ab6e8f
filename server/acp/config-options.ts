/**
 * The session's options an ACP client may set (`session/set_config_option`,
 * ADR 0063): the approval mode, never wider than the session's policy allows
 * (its ceiling), and the model, from the catalogue's ids. Advertised as two
 * `select` options in `session/new`, `session/load` and `session/resume`
 * answers. Pure: what a value means for the session is the host's (it opens
 * the session again with it).
 */
import type { SessionConfigOption } from '@agentclientprotocol/sdk';
import type { ApprovalPolicy } from '../../ports/approval.js';

/** What the host says a session may be set to, and what it runs with now. */
export interface AcpConfigChoices {
  /** `ceiling`: the widest mode the session's policy allows (what it was started with, and no wider than the agent's flags). */
  approval: { current: ApprovalPolicy; ceiling: ApprovalPolicy };
  /** `choices` includes `current`. */
  model: { current: string; choices: readonly string[] };
}

/** What a client set, to open the session with. */
export interface AcpConfig {
  approval?: ApprovalPolicy;
  model?: string;
}

/** From narrow to wide (`safety/policy-order.ts`). */
const APPROVALS: readonly ApprovalPolicy[] = ['never', 'ask', 'auto'];

const APPROVAL_TEXT: Record<ApprovalPolicy, string> = {
  never: 'Ask nobody: run what the sandbox or the workspace confines, refuse the rest',
  ask: 'Ask the client before a call that needs approval',
  auto: 'Ask nobody: run every call the guards allow',
};

/** A value the session will not take: `reason` is bridle's code (`POLICY_WIDENED`, `BAD_CONFIG_VALUE`, `BAD_CONFIG_ID`). */
export class ConfigOptionError extends Error {
  override name = 'ConfigOptionError';
  constructor(
    readonly reason: 'POLICY_WIDENED' | 'BAD_CONFIG_VALUE' | 'BAD_CONFIG_ID',
    message: string,
  ) {
    super(message);
  }
}

/** Contract: pure; the options as the schema has them, approval first. */
export function configOptions(c: AcpConfigChoices): SessionConfigOption[] {
  const allowed = APPROVALS.slice(0, APPROVALS.indexOf(c.approval.ceiling) + 1);
  return [
    {
      type: 'select',
      id: 'approval',
      name: 'Approval',
      category: 'mode',
      description: `Which calls wait for you; at most ${c.approval.ceiling}, as the session's policy allows`,
      currentValue: c.approval.current,
      options: allowed.map((value) => ({ value, name: value, description: APPROVAL_TEXT[value] })),
    },
    {
      type: 'select',
      id: 'model',
      name: 'Model',
      category: 'model',
      currentValue: c.model.current,
      options: c.model.choices.map((value) => ({ value, name: value })),
    },
  ];
}

/**
 * The change `value` makes to option `configId`, or undefined when it is the current value.
 * Contract: pure; throws `ConfigOptionError` for an unknown option, a value not offered, or an approval mode
 * wider than the ceiling (`POLICY_WIDENED`: a client never widens what the session's policy allows).
 */
export function settleConfig(c: AcpConfigChoices, configId: string, value: unknown): AcpConfig | undefined {
  if (typeof value !== 'string') throw new ConfigOptionError('BAD_CONFIG_VALUE', `option ${JSON.stringify(configId).slice(0, 80)} takes a value id, not ${typeof value}`);
  if (configId === 'approval') {
    const at = APPROVALS.indexOf(value as ApprovalPolicy);
    if (at < 0) throw new ConfigOptionError('BAD_CONFIG_VALUE', `approval must be never, ask or auto (got ${JSON.stringify(value).slice(0, 80)})`);
    if (at > APPROVALS.indexOf(c.approval.ceiling)) throw new ConfigOptionError('POLICY_WIDENED', `approval ${value} would widen the session's policy, which allows at most ${c.approval.ceiling}`);
    return value === c.approval.current ? undefined : { approval: value as ApprovalPolicy };
  }
  if (configId === 'model') {
    if (!c.model.choices.includes(value)) throw new ConfigOptionError('BAD_CONFIG_VALUE', `model ${JSON.stringify(value).slice(0, 120)} is not one this session offers (${c.model.choices.join(', ')})`);
    return value === c.model.current ? undefined : { model: value };
  }
  throw new ConfigOptionError('BAD_CONFIG_ID', `no option ${JSON.stringify(configId).slice(0, 80)}: bridle's are approval and model`);
}
