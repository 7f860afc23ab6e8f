/**
 * `createSession`: the library's entry and the one composition root. A
 * session is built from rows — the `base` bundle unless the caller gives its
 * own, a patch over them, settings as sugar over them — mounted on a host
 * (`runtime/host.ts`), whose services then wire the machines
 * (`runtime/wiring.ts`). The CLI, the server, subagents, replay and the
 * benchmarks all come through here.
 */
import { base } from '../bundles/base.js';
import { DEFAULT_COMPACT_THRESHOLD } from './context/windows.js';
import type { ApprovalService } from '../ports/approval.js';
import type { Clock } from '../log/clock.js';
import type { Ids } from '../ports/ids.js';
import { APPROVAL, CLOCK, CONTEXT, FS, IDS, LOOP, MODEL, PRICES, SANDBOX, STORE, SUBAGENTS, SUBPROCESS } from '../ports/index.js';
import type { ModelProvider } from '../ports/model.js';
import type { SandboxService } from '../ports/sandbox.js';
import type { ChildSpec, SessionControl } from '../ports/session.js';
import type { SessionStore, WriterLock } from '../ports/store.js';
import type { BudgetConfig, BudgetLimit, PriceTable } from '../log/entries-budget.js';
import type { DraftOf } from '../log/entries.js';
import type { SessionLoop } from '../log/entries-session.js';
import { remainingOf, sessionBudget } from './subagents/budget.js';
import type { LogStore } from '../log/store.js';
import type { ChildSession, Subagents, TreeBudget } from '../ports/subagents.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { PromptRegistry } from './prompt/registry.js';
import { RetryConfig } from '../plugins/recovery.js';
import type { RetryPolicy } from '../ports/loop.js';
import type { Plugin } from '../plugins/host.js';
import { composeEntries, enabledRows, type ComposedRow, type HostFacts, type PatchEntry, type Row } from '../plugins/rows.js';
import type { LoadedPlugins } from './catalogue.js';
import { buildHost, type ServiceOverride } from './host.js';
import { loopIdentity } from './loop-identity.js';
import { applySettings, type SettingsLayer } from './settings.js';
import { policyOf, settlePolicy } from './session-policy.js';
import { wireSession } from './wiring.js';
import type { BridleSession } from './bridle-session.js';
import type { Services, SessionOptions } from './session-options.js';

/** A session as its parent drives it through a subagent provider. */
export function asChild(child: BridleSession): ChildSession {
  let closed: Promise<void> | undefined;
  return {
    id: child.id,
    location: child.recorder.store.location,
    entries: () => child.recorder.entries,
    send: (text, mode) => child.send(text, mode).then(() => undefined),
    run: async (text) => {
      const out = await child.run(text);
      return { reason: out.reason, ...(out.code ? { code: out.code } : {}), ...(out.cause ? { cause: out.cause } : {}) };
    },
    cancel: (cause) => child.cancel(cause),
    close: () => (closed ??= child.close()),
  };
}

/** The `session/takeover` a writer logs when its lock replaced a stale one (ADR 0017). */
export function takeoverDraft(lock: WriterLock): DraftOf<'session/takeover'>[] {
  if (!lock.tookOver) return [];
  return [{ kind: 'session/takeover', ignorable: true, stale: lock.tookOver, by: { pid: lock.holder.pid, host: lock.holder.host } }];
}

/** The `session/reopen` a process logs as it goes on writing an existing log. */
function reopenDraft(lock: WriterLock | undefined): DraftOf<'session/reopen'> {
  return lock ? { kind: 'session/reopen', writer: { pid: lock.holder.pid, host: lock.holder.host } } : { kind: 'session/reopen' };
}

/** The retry policy `session/start` records when the `recovery:retry` row sets one (replay reads it back). */
function retryConfigured(rows: readonly ComposedRow[]): { retry?: RetryPolicy } {
  const row = rows.find((r) => r.id === 'recovery:retry' && r.use === 'retry');
  if (!row?.config || Object.keys(row.config as object).length === 0) return {};
  return { retry: RetryConfig.parse(row.config) };
}

const isComposed = (rows: readonly (Row | ComposedRow)[]): rows is readonly ComposedRow[] => rows.length > 0 && 'from' in rows[0]!;

/** Contract: pure but for `facts`' default; the rows a session of these options mounts, with their provenance. */
export function sessionRows(o: Pick<SessionOptions, 'rows' | 'patch' | 'settings' | 'facts'>): ComposedRow[] {
  const given = o.rows ?? base.rows;
  let rows = isComposed(given) ? [...given] : composeEntries({ from: `bundle ${o.rows ? 'options' : base.name}`, rows: given }).rows;
  if (o.patch?.length) rows = composeEntries({ from: 'composed', rows: rows as Row[] }, { from: 'options', patch: o.patch }).rows.map((r, i) => ({ ...r, from: r.from === 'composed' ? (rows[i]?.from ?? 'options') : r.from }));
  if (o.settings) rows = applySettings(rows, [{ from: 'options', settings: o.settings }]).rows;
  return enabledRows(rows, o.facts ?? { env: process.env, tty: Boolean(process.stdin.isTTY) });
}

/** One log given for one session: a child (another id) must not write into its parent's log, so it is refused by name. */
function storeOf(s: SessionStore | LogStore): SessionStore {
  if ('open' in s) return s;
  let owner: string | undefined;
  const only = (id: string) => {
    owner ??= id;
    if (id !== owner) throw new Error(`the store given holds the log of session ${owner} only; pass a store of sessions (services.store) to open ${id}`);
  };
  // A bare log keeps no claim and cannot be read back: its writer is whoever handed it in.
  return {
    id: 'given',
    location: s.location,
    locate: () => s.location,
    open: (id) => (only(id), s),
    claim: async (id) => (only(id), { location: s.location, holder: { pid: process.pid, host: 'given', since: new Date(0).toISOString() }, release: () => undefined }),
    tail: async () => undefined,
    read: async () => undefined,
    list: async () => ({ sessions: [], problems: [] }),
    forks: async () => [],
  };
}

/** The cap `session/start` records: the limit, and the prices it is counted at when it has a dollar part (ADR 0047). */
function spendingCap(limit: BudgetLimit | undefined, prices: PriceTable | undefined): BudgetConfig | undefined {
  if (!limit || (limit.tokens === undefined && limit.usd === undefined)) return undefined;
  const cap: BudgetConfig = { ...(limit.tokens !== undefined ? { tokens: limit.tokens } : {}), ...(limit.usd !== undefined ? { usd: limit.usd } : {}) };
  if (limit.usd !== undefined && prices) cap.prices = { asOf: prices.asOf, models: prices.models };
  return cap;
}


/** The services the caller gave, in the place of the rows' (each key only when given). */
function overridesOf(s: Services): ServiceOverride[] {
  const given: [ServiceOverride['key'], unknown][] = [
    [MODEL, s.model],
    [STORE, s.store && storeOf(s.store)],
    [CLOCK, s.clock],
    [IDS, s.ids],
    [APPROVAL, s.approval],
    [SUBAGENTS, s.subagents],
    [SANDBOX, s.sandbox],
  ];
  return given.filter(([, service]) => service).map(([key, service]) => ({ key, service }));
}

/** The session's host: its rows mounted, the caller's services, tools, prompt and plugins in their place. */
function hostOf(o: SessionOptions, rows: ComposedRow[], control: SessionControl): ReturnType<typeof buildHost> {
  const s = o.services ?? {};
  return buildHost(rows, {
    session: control,
    overrides: overridesOf(s),
    ...(o.toolFilter ? { restrict: { only: o.toolFilter.only, scoped: o.toolFilter.scoped ?? [] } } : {}),
    // `buildHost` reads each of these only as present or not (`??`, a default parameter): an undefined one is an absent one.
    tools: s.tools,
    prompt: s.prompt,
    plugins: o.plugins,
    loaded: o.loaded,
  });
}

/** What a parent hands its in-process children: its options, rows and host, and its session once built. */
interface Parent {
  o: SessionOptions;
  rows: ComposedRow[];
  host: ReturnType<typeof buildHost>['host'];
  id: string;
  /** Its model, store and clock as built: a child runs on them. */
  model: ModelProvider;
  store: SessionStore;
  clock: Clock;
  session(): BridleSession | undefined;
}

/** A child session of `parent`, started, its watchers subscribed first (they see its `session/start`). */
function openChild(parent: Parent, spec: ChildSpec): ChildSession {
  const { o, rows, host } = parent;
  const s = o.services ?? {};
  // The parent's sandbox policy as it is now: a child keeps it, whatever happens to the parent's later.
  const sandbox = host.get(SANDBOX);
  const snapshot: SandboxService = { provider: sandbox.provider, policy: structuredClone(sandbox.policy) };
  const budget = host.has(SUBAGENTS) ? host.get(SUBAGENTS).budget : undefined;
  // The child may spend what the parent has left now; what it spent comes back in its subagent/end.
  const session = parent.session();
  const own = session ? sessionBudget(session.recorder.entries) : undefined;
  const inherited = own?.limit ? remainingOf(own.limit, own.used) : undefined;
  // A child on a model of its own (ADR 0066) builds it from its `model` row, the parent's changed as the spec says.
  const childModel = spec.model;
  const child = createSession({
    cwd: o.cwd,
    bridleHome: o.bridleHome,
    id: spec.id,
    depth: spec.depth,
    parent: parent.id,
    rows,
    ...(typeof childModel === 'object' ? { patch: [{ id: 'model', ...childModel }] } : {}),
    // Every child's approval is `never`, whatever its parent's (I10, ADR 0052): nothing asks, nothing waits.
    settings: { approval: 'never' as const, allow: [], ...(typeof childModel === 'string' ? { model: childModel } : {}) },
    // The parent's product: its rows, the tools service and plugins it was given, its model, store and clock.
    services: { ...(childModel === undefined ? { model: parent.model } : {}), store: parent.store, clock: parent.clock, sandbox: snapshot, ...(s.tools ? { tools: s.tools } : {}) },
    ...(o.plugins ? { plugins: o.plugins } : {}),
    ...(spec.tools || spec.scoped ? { toolFilter: { ...(spec.tools ? { only: spec.tools } : {}), ...(spec.scoped ? { scoped: spec.scoped } : {}) } } : {}),
    ...(budget ? { budget } : {}),
    ...(inherited ? { inheritedBudget: inherited } : {}),
    ...(spec.traceparent ? { traceparent: spec.traceparent } : {}),
    ...(o.sleep ? { sleep: o.sleep } : {}),
    ...(o.loaded ? { loaded: o.loaded } : {}),
  });
  child.subscribe((e) => {
    if (e.type === 'entry.appended') spec.onEntry?.(e.entry);
    else if (e.type === 'chunk.streamed') spec.onChunk?.(e.chunk, e.step);
  });
  child.start();
  return asChild(child);
}

/** Whether this open goes on with a log (its entries given, not a log already opened by the caller). */
const continuing = (o: SessionOptions) => (o.existing?.length ?? 0) > 0 && o.opened === undefined;

/** Going on with a log under another policy is settled before the log opens: the change to log, or a throw (the host disposed). */
function settledPolicy(o: SessionOptions, host: ReturnType<typeof buildHost>['host'], policy: ReturnType<typeof policyOf> | undefined): DraftOf<'session/policy'> | undefined {
  try {
    return continuing(o) && policy ? settlePolicy(o.existing!, policy, { override: o.overridePolicy === true, workspace: o.cwd, moveWorkspace: o.moveWorkspace === true }) : undefined;
  } catch (err) {
    host.dispose();
    throw err;
  }
}

const withLoop = (l: SessionLoop | undefined): { ranLoop?: SessionLoop } => (l ? { ranLoop: l } : {});

/** What `session/start` records of the loop, the context window, compaction and the spending cap. */
function configuredOf(rows: readonly ComposedRow[], host: ReturnType<typeof buildHost>['host'], modelName: string, budget: BudgetConfig | undefined) {
  const loop = host.get(LOOP);
  const context = host.get(CONTEXT);
  const window = context.window ?? (Object.hasOwn(context.windows, modelName) ? context.windows[modelName] : undefined);
  return {
    maxSteps: loop.maxSteps,
    ...retryConfigured(rows),
    ...(window !== undefined ? { contextWindow: window } : {}),
    ...(context.threshold !== DEFAULT_COMPACT_THRESHOLD ? { compactThreshold: context.threshold } : {}),
    ...(context.tailRatio !== undefined || context.summaryMaxTokens !== undefined ? { compaction: { tailRatio: context.tailRatio, summaryMaxTokens: context.summaryMaxTokens } } : {}),
    ...(budget ? { budget } : {}),
  };
}

/**
 * Contract: the session is built and its log opened (under its writer lock), and nothing has run: no entry is
 * appended, no actor started, no approval asked, until `start()`. Subscribe first to see every event from
 * `session/start` on. Throws before anything is written (a widened policy, a log too old to continue, a held lock).
 */
export function createSession(o: SessionOptions): BridleSession {
  const rows = sessionRows(o);
  let id = o.id;
  let inject: (text: string) => void = () => undefined;
  let session: BridleSession | undefined;
  let parent: Parent | undefined;
  const control: SessionControl = {
    get id() {
      return id ?? '';
    },
    depth: o.depth ?? 0,
    cwd: o.cwd,
    bridleHome: o.bridleHome,
    ...(o.traceparent ? { traceparent: o.traceparent } : {}),
    ...(o.budget ? { budget: o.budget } : {}),
    inject: (text) => inject(text),
    entries: () => session?.recorder.entries ?? [],
    record: (draft) => void session?.recorder.append(draft),
    flush: async () => {
      if (session && !session.recorder.isDurable) await session.recorder.flush();
    },
    child: (spec) => openChild(parent!, spec),
  };
  const built = hostOf(o, rows, control);
  const { host } = built;
  id ??= host.get(IDS).session();
  const model = host.get(MODEL);
  const modelName = model.name ?? model.id;
  const store = host.get(STORE);
  const clock = host.get(CLOCK);
  parent = { o, rows, host, id, model, store, clock, session: () => session };
  const loop = host.get(LOOP);
  const budget = spendingCap(o.inheritedBudget ?? loop.budget, loop.budget?.prices ?? (host.has(PRICES) ? host.get(PRICES) : undefined));
  // What the session may do, logged at its start; going on with a log under another is settled before the log opens.
  const policy = host.has(APPROVAL) && host.has(SANDBOX) ? policyOf(host.get(APPROVAL), host.get(SANDBOX)) : undefined;
  const policyChange = settledPolicy(o, host, policy);
  const log = store.open(id, o.lock ? { lock: o.lock } : {});
  try {
    session = wireSession(o, {
      id,
      host,
      model,
      modelName,
      store: log,
      clock,
      tools: built.tools,
      fs: host.get(FS),
      subprocess: host.get(SUBPROCESS),
      hooks: built.hooks,
      prompt: built.prompt,
      approval: host.get(APPROVAL),
      ...(host.has(SANDBOX) ? { sandbox: host.get(SANDBOX) } : {}),
      loop,
      agentLoop: built.loop,
      ...withLoop(loopIdentity(rows, built.loop, o.loaded)),
      context: host.get(CONTEXT),
      ...(policy ? { policy } : {}),
      configured: configuredOf(rows, host, modelName, budget),
      bindInject: (f) => (inject = f),
      // Going on with a log is said in it (replay starts a segment there), and so is a lock this open took over
      // from a writer that is gone — both before anything queued runs.
      opening: [...(continuing(o) ? [reopenDraft(log.lock)] : []), ...(log.lock && !o.lockLogged ? takeoverDraft(log.lock) : []), ...(policyChange ? [policyChange] : [])],
      onClose: async () => {
        // A cancel still reaching a child, and the child's close, finish before the host goes.
        if (host.has(SUBAGENTS)) await host.get(SUBAGENTS).drain();
        host.dispose();
      },
    });
  } catch (err) {
    // Nothing half-open is left: the log (and its lock) closed, the rows unmounted.
    void log.close().catch(() => undefined);
    host.dispose();
    throw err;
  }
  if (o.budget) session.recorder.onEntry((e) => void o.budget!.draw(e));
  return session;
}
