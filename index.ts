/**
 * bridle as a library: `createSession` and the machines it wires, the ports a
 * provider implements, the providers that ship, the built-in tools, and the
 * log's readers and writer. See README, "Embedding".
 */

// The session: built from rows (the product), every seam a service on its host; created, subscribed to, then started (ADR 0051).
export { createSession, sessionRows } from './runtime/session.js';
export { SessionCrashedError } from './runtime/session-fault.js';
export { SessionNotStartedError } from './runtime/wiring/lifecycle.js';
export type { BridleSession } from './runtime/bridle-session.js';
export type { Services, SessionOptions } from './runtime/session-options.js';
export type { SessionFeedEvent, SessionFeedListener } from './runtime/wiring/feed.js';
export { PolicyWidenedError } from './runtime/session-policy.js';

// Fork and what-if from a log (ADR 0029): a new session from a past point, nothing re-run.
export { forkSession, ForkRefusedError, type ForkedSession, type ForkOptions } from './runtime/logs/fork.js';
export { forkPoints, planFork, type ForkPoint, type ForkRefusal, type ForkRefusalCode } from './log/fork.js';

// The product as rows: the base bundle, composition, the plugin substrate.
export { base, BUNDLES, type Bundle } from './bundles/base.js';
export { composeEntries, enabledRows, Patch, RowSchema, type ComposedRow, type HostFacts, type Layer, type PatchEntry, type Predicate, type Row } from './plugins/rows.js';
export { CompositionError, DuplicateRowError } from './plugins/composition-error.js';
export { Host, type Plugin, type PluginContext, type PluginStatus, type Disposer } from './plugins/host.js';
export { DuplicateProviderError, MissingServiceError, PluginMountError } from './plugins/host-errors.js';
export { Dispatcher } from './plugins/dispatch.js';
export { CATALOGUE, loadRowPlugins } from './runtime/catalogue.js';
export { checkRows } from './runtime/check.js';
export { AGENT_LOOP, type AgentLoop, builtinLoop, MACHINES } from './runtime/agent-loop.js';
export type { LoopRefinements } from './runtime/provide-machines.js';
export type { MachineSeams, ProvidedMachines } from './runtime/provide-machines.js';
export * from './ports/index.js';
export { serviceKey, type KeyLike, type ServiceKey, type ServiceLookup } from './ports/service.js';
export { defineProvider, ProviderSetupError, type ProviderDefinition } from './ports/provider.js';
export { DEFAULT_CORE } from './runtime/prompt/builtin.js';

// The machines: pure statecharts; hosts supply effects with `.provide()`.
export { type SessionContext, type SessionEvent, type SessionInput, sessionMachine } from './machines/session.machine.js';
export type { InputMode } from './log/entries-inputs.js';
export { type TurnInput, turnMachine, type TurnOutput } from './machines/turn.machine.js';
export type { PreStepDecision } from './ports/hooks.js';
export { stepMachine, type StepEvent, type StepInput, type StepOutput } from './machines/step.machine.js';
export { type ToolCallEvent, type ToolCallInput, toolCallMachine, type ToolOutcome, type Validation } from './machines/tool-call.machine.js';
export type { ApprovalAnswer, Decision } from './ports/approval.js';
export { type CompactionInput, compactionMachine, type CompactionOutput } from './machines/compaction.machine.js';
export type { ContextMeasure } from './machines/compaction-drafts.js';
export { subagentMachine } from './machines/subagent.machine.js';
export type { SubagentInput, SubagentResult } from './machines/subagent-result.js';
export type { RetryPolicy } from './ports/loop.js';
export { defaultRetryPolicy, retryDelay } from './plugins/recovery.js';

// Context engineering: the system prompt's sections, the token estimate, orphan brackets.
export { PromptRegistry } from './runtime/prompt/registry.js';
export type { PromptScope, PromptSection } from './ports/prompt.js';
export { PromptVariableError } from './runtime/prompt/interpolate.js';
export type { PromptVars } from './ports/prompt.js';
export type { ContextMeter } from './runtime/context/meter.js';
export { estimateRequestTokens } from './log/context/tokens.js';
export { closeOrphanCompaction, findOrphanCompaction } from './log/context/orphan.js';

// Ports: what a provider implements.
export type { ModelProvider } from './ports/model.js';
export type { AcquireWriterLock, ForkRef, ListProblem, OpenedLog, SessionStore, StoredLog, StoredSession, WriterLock } from './ports/store.js';
export type { LockHolder } from './log/errors.js';
export type { LogStore } from './log/store.js';
export type { Delta, Forwardable, ForwardSettled, OwnedSession, RelayRefusal, RelaySource, SessionRelay, SweepOutcome } from './ports/relay.js';
export type { Clock } from './log/clock.js';
export type { AnswerRequest, Answerer, ApprovalPolicy } from './ports/approval.js';
export type { DeltaSink } from './actors/stream-model.js';
export type { HookName, HookTable, Hooks, Recovery, RequestErrorPayload, StreamPayload } from './ports/hooks.js';
export type { ChildSpec, SessionControl } from './ports/session.js';
export type { Admission, Advertised, ChildOutcome, ChildRequest, ChildSession, DelegationRequest, SubagentProvider, Subagents, TreeBudget } from './ports/subagents.js';
export { ToolError } from './ports/tool-error.js';
export type { ToolContext, ToolDefinition, ToolOutput } from './ports/tools.js';
export type { IntentBody, IntentKind, LoggedResult, RenderIntent, SearchMatch } from './ports/present.js';
export { FsIoError, readAtMost, type DirEntry, type EntryKind as FsEntryKind, type FileHandle, type FileStat, type FileSystem, type FsPath, type PathIntent, type UpdateOptions, type UpdateOutcome, type WalkEntry, type WalkOptions } from './ports/fs.js';
export { SUBPROCESS_UNAVAILABLE, type LimitHit, type Subprocess, type SubprocessConfinement, type SubprocessRequest, type SubprocessResult, type SubprocessSpec } from './ports/subprocess.js';
export type { Sandbox, SandboxPolicy, SandboxService } from './ports/sandbox.js';
export type { Chunk } from './log/chunks.js';
export type { ModelMessage, ModelRequest } from './log/messages.js';

// Providers.
export { createOpenAIProvider, type OpenAIProviderOptions } from './adapters/model/openai.js';
export { DEFAULT_STREAM_LIMITS, type StreamLimits } from './adapters/model/openai-deadlines.js';
export { createScriptedProvider, createScriptedProviderFromFunction, type ResponseFunction, type ScriptedOptions } from './adapters/model/scripted.js';
export { loadScript } from './adapters/model/scripted-script.js';
export { createJsonlStore } from './adapters/store/jsonl.js';
export { acquireJsonlLock, withWriterLock } from './adapters/store/jsonl-lock.js';
export { createMemoryStore, type MemoryStore } from './adapters/store/memory.js';
export { createPostgresSessionStore, type PostgresConfigInput, type PostgresSessionStore } from './adapters/store/postgres.js';
export { closePostgresPools, StoreUnavailableError } from './adapters/store/postgres-pool.js';
export { createPostgresRelay, type PostgresRelayOptions } from './adapters/store/postgres-relay.js';
export { StoreSchemaError } from './adapters/store/postgres-schema.js';
export { createLocalFs, localFsProvider, type LocalFsOptions } from './adapters/fs/local.js';
export { createMemoryFs, memoryFsProvider, type MemoryFsOptions } from './adapters/fs/memory.js';
export { createLocalSubprocess, localSubprocessProvider, type LocalSubprocessOptions } from './adapters/subprocess/local.js';
export { createMemorySubprocess, memorySubprocessProvider, type MemorySubprocessOptions } from './adapters/subprocess/memory.js';
export { createBwrapSandbox } from './adapters/sandbox/bwrap.js';
export { createOffSandbox } from './adapters/sandbox/off.js';
export { spawnSubagents } from './adapters/subagents/spawn.js';
export { forkSubagents } from './adapters/subagents/fork.js';
export { mockRemoteSubagents } from './adapters/subagents/mock-remote.js';
export { processSubagents } from './adapters/subagents/process.js';
export { createWorkerRunner, workerWorkflow } from './adapters/workflow/worker.js';
export type { AgentAnswer, AgentCall, Json, WorkflowOutcome, WorkflowRequest, WorkflowRunner } from './ports/workflow.js';
export { startServer, type BridleServer, type ServerOptions } from './server/server.js';

// Tools.
export { builtinTools, toolSpec } from './tools/index.js';

// The log.
export { Recorder, nothingToFlush, type EntryListener } from './log/recorder.js';
export { LeaseLostError, LogAppendError, LogNotDurableError, SessionLockedError } from './log/errors.js';
export { deriveMessages, Projection } from './log/derive-messages.js';
export { parseLog, type ParsedLog } from './log/parse.js';
export { assembleBlocks, chunksOf } from './log/chunks.js';
export { type Draft, Entry, ENTRY_KINDS, type EntryKind, type EntryOf } from './log/entries.js';
export { LOG_FORMAT } from './log/entries-session.js';
