/**
 * What `bridle acp` lets a client set on a session (ADR 0063): the approval
 * mode, at most what the session was started with and what this process's
 * flags allow, and the model, among the ids the product's catalogue prices
 * for the model row's wire (a scripted model offers only itself). A value set
 * becomes a layer of settings over the product, as a flag would be, and the
 * session is opened again with it: a narrower mode is logged as the flags'
 * (`session/policy`), going back up to the ceiling as an override of them.
 */
import type { Entry } from '../log/entries.js';
import type { ApprovalPolicy } from '../ports/approval.js';
import { loggedPolicy } from '../runtime/session-policy.js';
import { applySettings, isOpenAIUse } from '../runtime/settings.js';
import type { AcpConfig, AcpConfigChoices } from '../server/acp/config-options.js';
import { pricesIn } from './cost.js';
import type { Product } from './settings.js';

const APPROVALS: readonly ApprovalPolicy[] = ['never', 'ask', 'auto'];
const narrower = (a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy => (APPROVALS.indexOf(a) <= APPROVALS.indexOf(b) ? a : b);

function modelRowOf(product: Pick<Product, 'rows'>): { use: string; model: string } {
  const row = product.rows.find((r) => r.id === 'model');
  const config = (row?.config ?? {}) as { model?: string; file?: string };
  if (row?.use === 'scripted') return { use: 'scripted', model: `scripted:${config.file ?? ''}` };
  return { use: row?.use ?? '', model: config.model ?? '' };
}

/** Contract: pure; the approval policy the product's row runs under. */
const productApproval = (product: Pick<Product, 'rows'>): ApprovalPolicy =>
  ((product.rows.find((r) => r.id === 'approval')?.config as { policy?: ApprovalPolicy } | undefined)?.policy ?? 'ask');

/** The catalogue's model ids for a row of this wire: Claude's for `anthropic`, the others for the OpenAI wires; none for a scripted model. */
function catalogueModels(product: Pick<Product, 'rows'>, use: string): string[] {
  if (use !== 'anthropic' && !isOpenAIUse(use)) return [];
  return Object.keys(pricesIn(product).models).filter((id) => (use === 'anthropic') === id.startsWith('claude'));
}

/** Contract: pure; what a session of `product` whose log holds `entries` may be set to, with `set` applied. */
export function configChoices(product: Pick<Product, 'rows'>, entries: readonly Entry[], set: AcpConfig): AcpConfigChoices {
  const start = entries[0];
  const started = start?.kind === 'session/start' ? start.policy?.approval : undefined;
  const own = productApproval(product);
  const ceiling = started ? narrower(started, own) : own;
  const current = set.approval ?? loggedPolicy(entries)?.approval ?? own;
  const row = modelRowOf(product);
  const model = set.model ?? row.model;
  const choices = [...new Set([model, row.model, ...catalogueModels(product, row.use)])];
  return { approval: { current: narrower(current, ceiling), ceiling }, model: { current: model, choices } };
}

/**
 * The product a session set to `config` is opened from: the values as a layer of flags. An approval mode is
 * set as an override of the logged policy — `configChoices` has kept it within the ceiling — and every other
 * setting stays as the log and the flags had it. Contract: pure.
 */
export function withConfig(product: Product, config: AcpConfig | undefined): Product {
  if (!config || (config.approval === undefined && config.model === undefined)) return product;
  const settings = { ...(config.approval ? { approval: config.approval } : {}), ...(config.model ? { model: config.model } : {}) };
  const { rows } = applySettings(product.rows, [{ from: 'acp client', settings }]);
  return { ...product, rows, flagged: { ...product.flagged, ...settings }, ...(config.approval ? { overridePolicy: true } : {}) };
}
