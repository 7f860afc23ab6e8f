/**
 * The one option bag a session is created from (ADR 0051): the product (rows,
 * a patch, settings, plugins), services in place of rows, where it runs, the
 * log it goes on with, and the opener's duties (who answers approvals). What a
 * host watches is not here: it subscribes to the session before it starts it.
 */
import type { InspectionEvent, Observer, Snapshot } from 'xstate';
import type { BudgetLimit } from '../log/entries-budget.js';
import type { Entry } from '../log/entries.js';
import type { LogStore } from '../log/store.js';
import type { PreStepDecision } from '../ports/hooks.js';
import type { Plugin } from '../plugins/host.js';
import type { ComposedRow, HostFacts, PatchEntry, Row } from '../plugins/rows.js';
import type { Answerer, ApprovalService } from '../ports/approval.js';
import type { Clock } from '../log/clock.js';
import type { Ids } from '../ports/ids.js';
import type { ModelProvider } from '../ports/model.js';
import type { SandboxService } from '../ports/sandbox.js';
import type { SessionStore, WriterLock } from '../ports/store.js';
import type { Subagents, TreeBudget } from '../ports/subagents.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { LoadedPlugins } from './catalogue.js';
import type { PromptRegistry } from './prompt/registry.js';
import type { SettingsLayer } from './settings.js';

/** Service instances that take the place of their seam's row: a model object of the app's own, a memory store, a test clock. */
export interface Services {
  model?: ModelProvider;
  /** A store of sessions, or one log for this session alone. */
  store?: SessionStore | LogStore;
  clock?: Clock;
  ids?: Ids;
  approval?: ApprovalService;
  /** The tools themselves, in the place of every `tool:*` row. */
  tools?: readonly ToolDefinition[];
  /** The prompt registry itself, in the place of every `prompt:*` row (replay's holds the logged prompt). */
  prompt?: PromptRegistry;
  /** The registry of subagent providers, in the place of the `subagents` row (the `subagent:*` rows register into it). */
  subagents?: Subagents;
  /** The sandbox and the policy commands run under, in the place of the `sandbox` row (a child gets its parent's, snapshotted). */
  sandbox?: SandboxService;
}

export interface SessionOptions {
  /** The workspace: the file tools and the sandbox are confined to it. */
  cwd: string;
  /** Where logs and config live, outside the model's reach; the file tools refuse it and the sandbox hides it. */
  bridleHome: string;
  /** Default: a fresh one from the `ids` service. */
  id?: string;
  /** The product: rows (default: the `base` bundle's), as given or already composed (with `from`). */
  rows?: readonly Row[] | readonly ComposedRow[];
  /** Applied over `rows` (layer `options`). */
  patch?: readonly PatchEntry[];
  /** The config file's settings (`approval: 'auto'`, `maxSteps: 20`, …): sugar that patches the matching rows. */
  settings?: SettingsLayer['settings'];
  services?: Services;
  /** Mounted after the rows. */
  plugins?: readonly Plugin<any>[];
  /** Plugins that module-path rows name, already imported (`loadRowPlugins`). */
  loaded?: LoadedPlugins;
  /** What `disabled` predicates read; default: this process's environment, and whether stdin is a terminal. */
  facts?: HostFacts;
  /** Who answers `ask` approvals (a terminal, WebSocket clients, an ACP client); none: an `ask` is denied as unavailable. */
  answerer?: Answerer;
  /** A spent budget asks `answerer` whether to go on (chat, serve, acp); else the turn ends `BUDGET_EXHAUSTED` (ADR 0047). */
  askOnBudget?: boolean;
  /** A fixed system prompt, byte for byte, instead of the prompt registry's (replay passes the logged one). */
  system?: string;
  /** How a retry waits; tests pass one that does not. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The most an answer may hold before it is cut `OUTPUT_TOO_LARGE` (default `MAX_ANSWER_BYTES`); tests pass a smaller one. */
  maxAnswerBytes?: number;
  preStep?: (input: { turn: string; text: string }) => Promise<PreStepDecision>;
  /** Entries of an existing log, when the session continues one. */
  existing?: readonly Entry[];
  /**
   * How `existing` came to be: by default it is a log this session goes on with (it logs `session/reopen` and is
   * handed the input the log holds queued); `fresh`: only the header this same session would have written (replay's
   * first segment); `logged`: the reopening is in `existing` already (replay's later segments).
   */
  opened?: 'fresh' | 'logged';
  /** Input waits for this as for a plugin still starting (replay holds a reopened session's queued input until its log has the opening). */
  startGate?: Promise<void>;
  /** A persisted session snapshot to start from instead of the initial state (resume: `restoreSessionSnapshot(existing)`). */
  snapshot?: Snapshot<unknown>;
  depth?: number;
  parent?: string | null;
  /** The W3C trace context this session's spans hang under, logged in its `session/start` (ADR 0055). */
  traceparent?: string;
  /** An xstate inspector of the session's actors (`bridle serve --inspect`); a host watches the session through `subscribe`. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** The session's writer lock, already held (resume, `run --session`); else the store takes one as it opens the log. */
  lock?: WriterLock;
  /** The lock's takeover of a stale claim is already in the log (resume's repair wrote it first). */
  lockLogged?: boolean;
  /** A child's: the budget of the tree it belongs to, which every one of its entries draws from. */
  budget?: TreeBudget;
  /** A child's: what its parent's spending cap had left when it was created (ADR 0047), instead of the rows' cap. */
  inheritedBudget?: BudgetLimit;
  /**
   * Going on with a log under a wider policy than it logged (ADR 0027): allowed, and logged as `session/policy`,
   * only with this set, and never for a subagent's session. Without it a widening throws `PolicyWidenedError`.
   */
  overridePolicy?: boolean;
  /**
   * Going on with a log in another workspace (`cwd`) than it logged (ADR 0041): allowed, and logged as a
   * `session/policy` with `cwd`, only with this set, and never for a subagent's session. Without it the
   * difference throws `WorkspaceChangedError`.
   */
  moveWorkspace?: boolean;
  /** A child's: the tools it sees at most (by intersection), and tools of its own that are never hidden. */
  toolFilter?: { only?: readonly string[]; scoped?: readonly ToolDefinition[] };
}
