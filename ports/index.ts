/**
 * Every service's key, declared once. A plugin finds a service by its key
 * (`ctx.get(MODEL)`), never by importing a provider; a row's seam is the
 * service its provider provides.
 */
import type { AcpClient } from './acp-client.js';
import type { ApprovalService } from './approval.js';
import type { Clock } from '../log/clock.js';
import type { FileSystem } from './fs.js';
import type { Hooks } from './hooks.js';
import type { Ids } from './ids.js';
import type { ContextSettings, LoopSettings } from './loop.js';
import type { ModelProvider } from './model.js';
import type { PromptSections } from './prompt.js';
import type { SandboxService } from './sandbox.js';
import { serviceKey } from './service.js';
import type { SessionControl } from './session.js';
import type { SessionStore } from './store.js';
import type { SubagentProvider, Subagents } from './subagents.js';
import type { Subprocess } from './subprocess.js';
import type { ToolRegistry } from './tool-registry.js';
import type { WorkflowRunner } from './workflow.js';
import type { PriceTable } from '../log/entries-budget.js';

export const MODEL = serviceKey<ModelProvider>('model');
export const STORE = serviceKey<SessionStore>('store');
export const APPROVAL = serviceKey<ApprovalService>('approval');
export const TOOLS = serviceKey<ToolRegistry>('tools');
export const PROMPT = serviceKey<PromptSections>('prompt');
export const HOOKS = serviceKey<Hooks>('hooks');
export const CLOCK = serviceKey<Clock>('clock');
export const IDS = serviceKey<Ids>('ids');
export const SESSION = serviceKey<SessionControl>('session');
export const LOOP = serviceKey<LoopSettings>('loop');
export const CONTEXT = serviceKey<ContextSettings>('context');
/** The list prices usage is costed at (the `prices` row; `log/cost.ts`). */
export const PRICES = serviceKey<PriceTable>('prices');
export const SANDBOX = serviceKey<SandboxService>('sandbox');
/** The registry of subagent providers (the `subagents` row). */
export const SUBAGENTS = serviceKey<Subagents>('subagents');
/** One subagent provider's seam (`subagent:spawn`, `subagent:fork`, …): each row registers into `subagents` rather than providing it. */
export const SUBAGENT = serviceKey<SubagentProvider>('subagent');
/** The file system every file tool goes through (`adapters/fs/`). */
export const FS = serviceKey<FileSystem>('fs');
/** The subprocess seam bash goes through (`adapters/subprocess/`). */
export const SUBPROCESS = serviceKey<Subprocess>('subprocess');
/** The ACP client driving this session (its files and terminals), when an ACP host provides one (`server/acp/`). */
export const ACP_CLIENT = serviceKey<AcpClient>('acp-client');
/** Runs the `workflow` tool's scripts (`adapters/workflow/`). */
export const WORKFLOW = serviceKey<WorkflowRunner>('workflow');
