/**
 * The soak's scenarios beyond a single session (ADR 0043): what the scripted
 * model answers in a trial whose parent hands work to subagents — through the
 * `workflow` tool (a script running agents in `parallel` and in a
 * `pipeline`) or `delegate` — and in the scenarios the generated kill points
 * (one per state of the tool-call, step, turn and subagent machines) run in.
 *
 * Every request names its trial (`soak trial N`); a subagent's also names
 * itself (`soak trial N agent X: …`, the task the parent's call wrote), so
 * one server answers parents and children alike.
 *
 * A subagent runs under approval `never` (I10), which denies `bash` whatever
 * the sandbox: a child's marking `bash` call is logged denied and must never
 * run (a marker line with no dispatch in its log is counted), and each child
 * also makes a read-only call, which is dispatched, so a kill can land
 * between a child's dispatch and its result. The parent marks with `bash`
 * before its workflow or delegations run; the `workflow` and `delegate`
 * bodies themselves are not idempotent either, and a child started twice
 * (two `subagent/start` for one child) counts as a body run twice.
 */
import { errorReply, pause, type Reply, type StreamItem, streamReply } from '../test/helpers/openai-sse-server.js';
import { textChunks, toolCallChunks, usageChunk } from '../test/helpers/openai-chunks.js';

/** The scenarios a generated kill point runs in; each trial of a moment runs its own (`workflow`, `delegate`). */
export const SCENARIOS = ['tools', 'ask', 'retry', 'fails', 'compaction', 'workflow', 'delegate', 'cancel', 'reads'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** What a scenario's answers need of its trial. */
export interface ScenarioTrial {
  id: number;
  phase: 'run' | 'resume';
  calls: number;
  requests: number;
}

interface Body {
  messages: { role: string; content?: unknown }[];
}

/** CLI flags a scenario needs beyond the soak's common ones (`--sandbox off`, ADR 0028: an orphaned body stays visible). */
export function scenarioFlags(s: Scenario | undefined): string[] {
  switch (s) {
    case 'ask':
      // No terminal: every call that asks is asked, then denied as unavailable.
      return ['--approval', 'ask', '--sandbox', 'off'];
    case 'workflow':
    case 'delegate':
    case 'cancel':
      return ['--approval', 'auto', '--sandbox', 'off', '--max-depth', '1'];
    default:
      return ['--approval', 'auto', '--sandbox', 'off'];
  }
}

/** A bash body that says it ran: one line per run, naming its call (`judge` reads the label back). */
export const marking = (t: ScenarioTrial, sleepS: number, then?: string) => {
  const label = `t${t.id}k${++t.calls}`;
  const command = [`echo ${label} >> marker`, ...(sleepS ? [`sleep ${sleepS}`] : []), ...(then ? [then] : [])].join('; ');
  return { id: `call_${label}`, name: 'bash', arguments: JSON.stringify({ command }) };
};
export const usage = (promptTokens = 100) => usageChunk({ prompt_tokens: promptTokens, completion_tokens: 5 });
export const slowly = (text: string, parts: number, ms: number): StreamItem[] => textChunks(text, { parts }).flatMap((c) => [pause(ms), c]);
const calls = (...cs: { id: string; name: string; arguments: string }[]) => streamReply([...toolCallChunks(cs), usage()]);
const text = (s: string) => streamReply([...textChunks(s), usage()]);
const call = (t: ScenarioTrial, name: string, args: object) => ({ id: `call_t${t.id}x${++t.calls}`, name, arguments: JSON.stringify(args) });
/** A read-only, idempotent call (it reads the marker file): it runs before anything flushes its dispatch (ADR 0072). */
export const reading = (t: ScenarioTrial) => call(t, 'read_file', { path: 'marker' });

/** The agent a request is from (`soak trial N agent X`), or undefined for the trial's own session. */
export function agentOf(body: Body): string | undefined {
  for (const m of body.messages) {
    const name = m.role === 'user' && typeof m.content === 'string' ? /soak trial \d+ agent (\w+)/.exec(m.content)?.[1] : undefined;
    if (name) return name;
  }
  return undefined;
}

/** Model requests since the turn's input: how many answers this turn has had. */
export const stepOf = (body: Body) => body.messages.length - 1 - body.messages.findLastIndex((m) => m.role === 'user');

/** The workflow's script: two agents in parallel, then two items through a two-stage pipeline (four more agents, stages overlapping). */
export function workflowScript(id: number): string {
  const task = (name: string) => `'soak trial ${id} agent ' + ${name} + ': mark the work'`;
  return [
    `const both = await parallel([() => agent(${task("'p1'")}), () => agent(${task("'p2'")})]);`,
    `const piped = await pipeline(['q1', 'q2'], (x) => agent(${task('x')}), (r) => agent(${task("'s' + r.length")}));`,
    'return { both, piped };',
  ].join('\n');
}

/** A workflow that fails fatally while one of its agents still runs: that agent is cancelled. */
export function cancellingScript(id: number): string {
  return [
    `const slow = agent('soak trial ${id} agent slow: mark the work slowly');`,
    'slow.catch(() => null);',
    `await agent('soak trial ${id} agent quick: mark the work');`,
    "throw fatal('soak: stop here', 'SOAK_STOP');",
  ].join('\n');
}

/** A subagent's answers: a marking bash call (denied) and a read-only call, then its report; the slow agent streams for seconds instead. */
function childReply(t: ScenarioTrial, agent: string, body: Body): Reply {
  if (agent === 'slow') return streamReply([...slowly(Array.from({ length: 100 }, (_, i) => `w${i} `).join(''), 100, 50), usage()]);
  if (stepOf(body) > 0) return text(`agent ${agent} done`);
  return calls(marking(t, 0.2), call(t, 'read_file', { path: 'marker' }));
}

/** Contract: pure but for the trial's counters; the answer to one request of a scenario's trial (`compaction`'s are the compaction moment's). */
export function scenarioReply(t: ScenarioTrial, s: Exclude<Scenario, 'compaction'>, body: Body): Reply {
  const agent = agentOf(body);
  if (agent) return childReply(t, agent, body);
  if (t.phase === 'resume') return text('carried on after the crash');
  t.requests++;
  const step = stepOf(body);
  switch (s) {
    case 'tools':
      return step === 0 ? calls(marking(t, 0.05), marking(t, 0.05)) : text('both ran');
    case 'ask':
      // One call asks (and is denied: no terminal), one names a tool that does not exist (rejected).
      return step === 0 ? calls(marking(t, 0), call(t, 'no_such_tool', {})) : text('neither ran');
    case 'retry':
      // The first request is rate-limited once: the step logs a retry and asks again.
      return t.requests === 1 ? errorReply(429, 'soak: slow down', { headers: { 'retry-after-ms': '20' } }) : step === 0 ? calls(marking(t, 0)) : text('marked after a retry');
    case 'fails':
      // A request the provider refuses for good: the step fails, the turn ends in error.
      return errorReply(400, 'soak: a request the provider refuses');
    case 'workflow':
      return step === 0 ? calls(marking(t, 0.2), call(t, 'workflow', { script: workflowScript(t.id) })) : text('the workflow ran');
    case 'delegate':
      // Two delegations in order: one runs a child, one names a provider nobody has (refused, no child).
      return step === 0
        ? calls(marking(t, 0.2), call(t, 'delegate', { task: `soak trial ${t.id} agent d1: mark the work` }), call(t, 'delegate', { task: `soak trial ${t.id} agent d2: mark the work`, provider: 'nope' }))
        : text('delegated');
    case 'cancel':
      return step === 0 ? calls(call(t, 'workflow', { script: cancellingScript(t.id) })) : text('the workflow stopped');
    case 'reads':
      // Two read-only, idempotent calls, which run before anything flushes them (ADR 0072), then a marking one, whose dispatch flush carries them.
      return step === 0 ? calls(call(t, 'list_dir', { path: '.' }), call(t, 'read_file', { path: 'marker' }), marking(t, 0)) : text('read and marked');
  }
}
