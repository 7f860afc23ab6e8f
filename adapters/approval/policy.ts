/**
 * The `policy` provider of the approval seam: `never`, `ask` or `auto`, plus
 * allow rules (`tool:pattern`, e.g. `bash:^npm test$`). Who answers an `ask`
 * is the host's (a terminal, WebSocket clients, an ACP client).
 */
import { z } from 'zod';
import type { ApprovalService } from '../../ports/approval.js';
import { APPROVAL } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { parseRule } from '../../safety/approval-rules.js';

/** A rule as rows and the config file write it: `tool:pattern`, checked where it is read. */
const RuleText = z.string().superRefine((text, ctx) => {
  try {
    parseRule(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

export const PolicyConfig = z.strictObject({
  policy: z.enum(['never', 'ask', 'auto']).default('ask'),
  rules: z.array(RuleText).default([]),
  answerTimeoutMs: z.int().positive().optional(),
});
export type PolicyConfig = z.infer<typeof PolicyConfig>;

export const policyApproval = defineProvider({
  seam: APPROVAL,
  name: 'policy',
  config: PolicyConfig,
  create: (c): ApprovalService => ({ policy: c.policy, rules: c.rules.map(parseRule), ...(c.answerTimeoutMs !== undefined ? { answerTimeoutMs: c.answerTimeoutMs } : {}) }),
});
