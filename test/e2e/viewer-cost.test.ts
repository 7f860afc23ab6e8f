/**
 * What a run cost, in the session viewer (headless Chromium through
 * playwright-core, Debian's `chromium`): live, each answer's row shows its
 * step's tokens and cost and the panel the turn and session totals, as the
 * server's `session/cost` (bridle cost's projection) gives them; a scripted
 * model's steps say scripted and cost $0; a replayed page with a subagent
 * shows the tree's total. Skipped without chromium, except in CI.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIST_PRICES } from '../../bundles/prices.js';
import { costLabels } from '../../cli/cost.js';
import { costOf } from '../../log/cost.js';
import type { Entry } from '../../log/entries.js';
import { viewerDir, visualizationsDir } from '../../visualizations/paths.js';
import { renderReplayHtml } from '../../visualizations/replay-html.js';
import { LogBuilder } from '../helpers/log-builder.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { tempDir } from '../helpers/temp.js';

const costOn = (page: Page, selector: string) => page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((li) => li.dataset.cost || '')`) as Promise<string[]>;
const panel = (page: Page) => page.evaluate('[...document.querySelectorAll("#cost li")].map((li) => li.textContent)') as Promise<string[]>;

describeWithSystemDep('the session viewer shows what a run cost', SYSTEM_DEPS.chromium, (executablePath) => {
  let browser: Browser;
  let t: TestServer;
  const tmp = tempDir('bridle-viewer-cost-');

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
    t = await startTestServer(
      (_req, i) => (i === 0 ? { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 1000, outputTokens: 100 } } : { text: 'Done.', usage: { inputTokens: 1500, outputTokens: 40, cachedTokens: 1000 } }),
      // The server's projection: bridle cost's, over the session's entries, at the shipped list prices.
      { viewer: { dir: viewerDir(), diagrams: visualizationsDir() }, scripted: { delayMs: 2 }, usage: async (_id, entries) => costOf(entries, LIST_PRICES) },
    );
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  async function runOneTurn(model: string): Promise<{ page: Page; log: readonly Entry[]; problems: string[] }> {
    const client = await RpcClient.connect(t.server.url, { token: t.token });
    const { sessionId } = await client.call('session/create', { model });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    await page.goto(`${t.server.httpUrl}?token=${t.token}&session=${sessionId}`);
    await page.waitForSelector('#status[data-state="attached"]');
    await client.call('session/attach', { sessionId });
    await client.call('session/input', { sessionId, text: 'look' });
    await page.waitForSelector('#timeline li[data-kind="turn/end"][data-cost]');
    client.close();
    return { page, log: t.sessions.at(-1)!.recorder.entries, problems };
  }

  it('live: each step shows its tokens and cost, the turn and the session their totals — the figures of bridle cost', async () => {
    const { page, log, problems } = await runOneTurn('gpt-5');
    const report = costOf(log, LIST_PRICES);
    const labels = costLabels(log, report);
    const answers = log.filter((e) => e.kind === 'assistant/message');
    // gpt-5 at $1.25 in, $0.125 cached, $10 out per million: 1000 in and 100 out is $0.002250.
    expect(await costOn(page, '#timeline li[data-kind="assistant/message"]')).toEqual(['step: in 1000 · out 100 · $0.002250', answers.map((e) => labels.get(e.seq))[1]]);
    expect(await costOn(page, '#timeline li[data-kind="turn/end"]')).toEqual([labels.get(log.find((e) => e.kind === 'turn/end')!.seq)]);
    expect(await page.locator('#cost-panel').isVisible()).toBe(true);
    const lines = await panel(page);
    expect(lines).toContain(`t1${labels.get(log.find((e) => e.kind === 'turn/end')!.seq)!.replace(/^turn: /, '')}`);
    expect(lines.find((l) => l?.startsWith('session'))).toContain(`$${report.total.usd!.toFixed(6)}`);
    expect(await page.locator('#cost-note').textContent()).toContain(`prices as of ${LIST_PRICES.asOf}`);
    expect(problems, problems.join('\n')).toEqual([]);
    await page.close();
  });

  it('live: a scripted model is labelled scripted and costs $0', async () => {
    const { page, problems } = await runOneTurn('scripted-test');
    const steps = await costOn(page, '#timeline li[data-kind="assistant/message"]');
    expect(steps).toEqual(['step: in 1000 · out 100 · scripted, $0', 'step: in 1500 (cached 1000) · out 40 · scripted, $0']);
    expect(await page.locator('#cost-note').textContent()).toContain('a scripted model costs nothing');
    expect(problems, problems.join('\n')).toEqual([]);
    await page.close();
  });

  it('replayed (bridle replay --html): the steps, and the subagent tree total when it has children', async () => {
    const child = 'p.t1.s1.c1';
    const withUsage = (es: Entry[], head: object, usage: object[]) => {
      let i = 0;
      return es.map((e) => (e.kind === 'session/start' ? ({ ...e, ...head } as Entry) : e.kind === 'assistant/message' ? ({ ...e, usage: usage[i++] } as Entry) : e));
    };
    const parent = withUsage(
      new LogBuilder().startTurn().startStep().answer('', [{ name: 'delegate', args: { task: 'x' } }]).dispatch(1)
        .add({ kind: 'subagent/start', callId: 't1.s1.c1', child, depth: 1, mode: 'spawn' })
        .add({ kind: 'subagent/end', callId: 't1.s1.c1', child, reason: 'completed' })
        .result(1).endStep('tool-calls').startStep().answer('done').endStep('stop').endTurn('completed').entries,
      { id: 'p', model: 'gpt-5' },
      [{ inputTokens: 1000, outputTokens: 100 }, { inputTokens: 1200, outputTokens: 20 }],
    );
    const childLog = withUsage(new LogBuilder().startTurn().startStep().answer('found').endStep('stop').endTurn('completed').entries, { id: child, model: 'claude-sonnet-4-5', depth: 1, parent: 'p' }, [{ inputTokens: 300, outputTokens: 30 }]);
    const report = costOf(parent, LIST_PRICES, (id) => (id === child ? childLog : undefined));
    const file = join(tmp, 'tree.html');
    writeFileSync(file, renderReplayHtml(parent, undefined, report));
    const page = await browser.newPage();
    await page.goto(`file://${file}`);
    await page.waitForSelector('#status[data-state="attached"]', { state: 'attached' });
    expect(await costOn(page, '#timeline li[data-kind="assistant/message"]')).toEqual(['step: in 1000 · out 100 · $0.002250', 'step: in 1200 · out 20 · $0.001700']);
    const lines = await panel(page);
    expect(lines.find((l) => l?.startsWith(`subagent ${child}`))).toContain('in 300 · out 30 · $0.001350');
    expect(lines.find((l) => l?.startsWith('tree'))).toContain(`$${report.total.usd!.toFixed(6)}`);
    await page.close();
  });
});
