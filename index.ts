/**
 * bridle as a library: `createSession` and the machines it wires, the ports a
 * provider implements, the providers that ship, the built-in tools, and the
 * log's readers and writer. See README, "Embedding".
 */

// The session: every seam provided, plus the host duties (header, checkpoints, wake).
export { createSession, DEFAULT_SYSTEM, SessionCrashedError, type BridleSession, type SessionOptions } from './runtime/session.js';

// The machines: pure statecharts; hosts supply effects with `.provide()`.
export { sessionMachine, type InputMode, type SessionContext, type SessionEvent, type SessionInput } from './machines/session.machine.js';
export { turnMachine, type PreStepDecision, type TurnInput, type TurnOutput } from './machines/turn.machine.js';
export { stepMachine, type StepEvent, type StepInput, type StepOutput } from './machines/step.machine.js';
export { toolCallMachine, type ApprovalAnswer, type Decision, type ToolCallEvent, type ToolCallInput, type ToolOutcome, type Validation } from './machines/tool-call.machine.js';
export { compactionMachine, type CompactionInput, type CompactionOutput, type ContextMeasure } from './machines/compaction.machine.js';
export type { RetryPolicy } from './machines/retry-policy.js';

// Context engineering: the system prompt's sections, the token estimate, orphan brackets.
export { PromptRegistry, type PromptScope, type PromptSection } from './runtime/prompt/registry.js';
export { PromptVariableError, type PromptVars } from './runtime/prompt/interpolate.js';
export type { ContextMeter } from './runtime/context/meter.js';
export { estimateRequestTokens } from './log/context/tokens.js';
export { closeOrphanCompaction, findOrphanCompaction } from './log/context/orphan.js';

// Ports: what a provider implements.
export type { ModelProvider } from './ports/model.js';
export type { AcquireWriterLock, LockHolder, LogStore, WriterLock } from './ports/store.js';
export type { Clock } from './ports/clock.js';
export type { AnswerRequest, Answerer, ApprovalPolicy } from './safety/approval.js';
export type { DeltaSink } from './runtime/stream-model.js';
export type { Plugin, PluginApi } from './plugins/hooks/registry.js';
export { ToolError, type Shell, type ShellRequest, type ShellResult, type ToolContext, type ToolDefinition, type ToolOutput } from './ports/tools.js';
export type { Chunk } from './log/chunks.js';
export type { ModelMessage, ModelRequest } from './log/messages.js';

// Providers.
export { createOpenAIProvider, DEFAULT_STREAM_LIMITS, type OpenAIProviderOptions, type StreamLimits } from './adapters/model/openai.js';
export { createScriptedProvider, createScriptedProviderFromFunction, loadScript, type ResponseFunction, type ScriptedOptions } from './adapters/model/scripted.js';
export { createJsonlStore } from './adapters/store/jsonl.js';
export { acquireJsonlLock, withWriterLock } from './adapters/store/jsonl-lock.js';
export { createMemoryStore, type MemoryStore } from './adapters/store/memory.js';
export { createLocalShell } from './adapters/subprocess/local.js';
export { startServer, type BridleServer, type ServerOptions } from './server/server.js';

// Tools.
export { builtinTools, toolSpec } from './tools/index.js';

// The log.
export { Recorder, nothingToFlush, type EntryListener } from './log/recorder.js';
export { LogAppendError, LogNotDurableError, SessionLockedError } from './log/errors.js';
export { deriveMessages, Projection } from './log/derive-messages.js';
export { parseLog, type ParsedLog } from './log/parse.js';
export { assembleBlocks, chunksOf } from './log/chunks.js';
export { Entry, ENTRY_KINDS, LOG_FORMAT, type Draft, type EntryKind, type EntryOf } from './log/entries.js';
