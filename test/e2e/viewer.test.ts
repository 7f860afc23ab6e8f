/**
 * The session viewer in headless Chromium (Debian's `chromium`, driven by
 * playwright-core; never a downloaded browser): it watches a scripted
 * session's entries arrive, lights up the active states, and approves a call;
 * an approval card shows the whole command; below 900 px what needs a person
 * comes before the charts. Then the same session as a self-contained replay
 * page. Without chromium these are skipped with a line saying how to install
 * it, except in CI, where they fail (test/helpers/system-deps.ts).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ModelRequest } from '../../log/messages.js';
import { viewerDir, visualizationsDir } from '../../visualizations/paths.js';
import { renderReplayHtml } from '../../visualizations/replay-html.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../helpers/system-deps.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { tempDir } from '../helpers/temp.js';

/** Longer than any presenter shows, over several lines, the last words on the last line. */
const LONG_COMMAND = [
  `printf '%s\\n' ${'a-rather-long-argument '.repeat(6)}end-of-the-first-line`,
  'ls -la',
  'echo "the last words of the command"',
].join('\n');

const firstInput = (req: ModelRequest) => {
  const m = req.messages.find((x) => x.role === 'user');
  return m && typeof m.content === 'string' ? m.content : '';
};

const seqsOnPage = (page: Page) => page.evaluate('[...document.querySelectorAll("#timeline li")].map((li) => Number(li.dataset.seq))') as Promise<number[]>;
const isActive = (page: Page, stateId: string) => page.evaluate(`!!document.querySelector('[id="state:${stateId}"]')?.classList.contains('active')`) as Promise<boolean>;

describeWithSystemDep('the session viewer', SYSTEM_DEPS.chromium, (executablePath) => {
  let browser: Browser;
  let t: TestServer;
  const tmp = tempDir('bridle-viewer-');

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('shows a live session — statecharts, timeline, live text — and approves a call', async () => {
    t = await startTestServer(
      (req, i) =>
        firstInput(req) === 'run the long command'
          ? i === 0 ? { toolCalls: [{ name: 'bash', arguments: { command: LONG_COMMAND } }] } : { text: 'Not run.' }
          : firstInput(req) === 'fix the greeting'
            ? i === 0 ? { toolCalls: [{ name: 'edit_file', arguments: { path: 'greet.ts', old_text: 'const a = 1;\nsay("helo");\nconst b = 2;', new_text: 'const a = 1;\nsay("hello");\nconst b = 2;' } }] } : { text: 'Not edited.' }
          : i === 0
            ? { text: 'I will write the file.', toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }] }
            : { text: 'Wrote hello.txt.' },
      { approval: 'ask', viewer: { dir: viewerDir(), diagrams: visualizationsDir() }, scripted: { delayMs: 2 } },
    );
    const client = await RpcClient.connect(t.server.url, { token: t.token });
    const { sessionId } = await client.call('session/create', {});
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    await page.goto(`${t.server.httpUrl}?token=${t.token}&session=${sessionId}`);
    await page.waitForSelector('#status[data-state="attached"]');
    await page.waitForSelector('svg [id="state:session.idle"].active');

    // Acting on a session needs attaching (ADR 0038): the test's client attaches as the page did.
    await client.call('session/attach', { sessionId });
    await client.call('session/input', { sessionId, text: 'write hello.txt' });
    const approve = page.locator('.approval[data-call-id="t1.s1.c1"] button[data-action="approve"]');
    await approve.waitFor();
    expect(await page.locator('.approval .what').textContent()).toContain('hello.txt');
    // While it waits: the session runs, the tool call is asking, and the question is already in the timeline.
    await page.waitForSelector('svg [id="state:tool-call.asking"].active');
    expect(await isActive(page, 'session.running.active')).toBe(true);
    await page.waitForSelector('#timeline li[data-kind="approval/asked"]');
    expect(await page.locator('#live').textContent()).toContain('I will write the file.');

    await approve.click();
    await page.waitForSelector('#timeline li[data-kind="turn/end"]');
    await page.waitForSelector('#timeline li[data-kind="checkpoint"]');
    await page.waitForSelector('svg [id="state:session.idle"].active');
    expect(await page.locator('.approval').count()).toBe(0);
    expect(await page.locator('#live').textContent()).toContain('Wrote hello.txt.');

    // Every entry, once, in order — exactly the log.
    const log = t.sessions[0]!.recorder.entries;
    expect(await seqsOnPage(page)).toEqual(log.map((e) => e.seq));
    expect(log.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'allowed-once', by: 'ws:client-2' });
    expect(log.find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'ok' });
    expect(problems, problems.join("\n")).toEqual([]);
    client.close();
    await page.close();
  });

  it('replays a finished log from one self-contained file, with a slider', async () => {
    const entries = t.sessions[0]!.recorder.entries;
    const file = join(tmp, 'replay.html');
    writeFileSync(file, renderReplayHtml(entries));
    const page = await browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    await page.goto(`file://${file}`);
    await page.waitForSelector('#status[data-state="attached"]', { timeout: 5000, state: 'attached' }).catch((e) => {
      throw new Error(`${e}\n${problems.join('\n')}`);
    });
    expect(await seqsOnPage(page)).toEqual(entries.map((e) => e.seq));
    // At the end: idle, nothing waiting.
    expect(await isActive(page, 'session.idle')).toBe(true);
    // Scrub back to the approval question.
    const asked = entries.findIndex((e) => e.kind === 'approval/asked') + 1;
    await page.locator('#slider').fill(String(asked));
    expect(await isActive(page, 'tool-call.asking')).toBe(true);
    expect(await isActive(page, 'session.running.active')).toBe(true);
    expect(await page.locator('.approval[data-call-id="t1.s1.c1"]').count()).toBe(1);
    expect(await page.locator('.approval button').first().isDisabled()).toBe(true);
    expect(await page.locator('#timeline li.future').count()).toBe(entries.length - asked);
    // Nothing was fetched: the page stands alone.
    expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
    expect(problems, problems.join('\n')).toEqual([]);
    await page.close();
  });

  it('the approval card of an edit_file shows the change as a diff, not only the path; a write_file its new content', async () => {
    const client = await RpcClient.connect(t.server.url, { token: t.token });
    const { sessionId } = await client.call('session/create', {});
    const page = await browser.newPage();
    await page.goto(`${t.server.httpUrl}?token=${t.token}&session=${sessionId}`);
    await page.waitForSelector('#status[data-state="attached"]');
    await client.call('session/attach', { sessionId });
    await client.call('session/input', { sessionId, text: 'fix the greeting' });
    const card = page.locator('.approval[data-call-id="t1.s1.c1"]');
    await card.waitFor();
    const lines = async (sel: string) => (await card.locator(sel).allTextContents()).map((s) => s.replace(/\n$/, ''));
    expect(await lines('.what .path')).toEqual(['greet.ts']);
    expect(await lines('.what .del')).toEqual(['- say("helo");']);
    expect(await lines('.what .add')).toEqual(['+ say("hello");']);
    expect(await lines('.what .same')).toEqual(['  const a = 1;', '  const b = 2;']);
    await card.locator('button[data-action="reject"]').click();
    await page.waitForSelector('#timeline li[data-kind="turn/end"]');
    client.close();
    await page.close();

    // The first session's write_file, replayed: its card shows the content being written.
    const file = join(tmp, 'replay-write.html');
    const entries = t.sessions[0]!.recorder.entries;
    writeFileSync(file, renderReplayHtml(entries));
    const replayPage = await browser.newPage();
    await replayPage.goto(`file://${file}`);
    await replayPage.waitForSelector('#status[data-state="attached"]', { state: 'attached' });
    await replayPage.locator('#slider').fill(String(entries.findIndex((e) => e.kind === 'approval/asked') + 1));
    expect(await replayPage.locator('.approval .what .add').allTextContents()).toEqual(['+ hi']);
    await replayPage.close();
  });

  it('at 390 px wide (a phone): nothing scrolls sideways, the header included', async () => {
    const widths = '({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, header: document.querySelector("header").scrollWidth })';
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    // Attached to the first session: its select option (id · model) and its log fill the page.
    await page.goto(`${t.server.httpUrl}?token=${t.token}&session=${t.sessions[0]!.id}`);
    await page.waitForSelector('#status[data-state="attached"]');
    await page.waitForSelector('#timeline li[data-kind="turn/end"]');
    // A real provider's model name is longer than the scripted model's: the select's option as a real session shows it.
    await page.evaluate(`document.querySelector('#session-select option').textContent = document.querySelector('#session-select option').value + ' · openrouter:anthropic/claude-sonnet-4.6'`);
    expect(await page.evaluate(widths)).toEqual({ doc: 390, body: 390, header: 390 });
    // The replay page's header carries the slider instead.
    const file = join(tmp, 'replay-narrow.html');
    writeFileSync(file, renderReplayHtml(t.sessions[0]!.recorder.entries));
    await page.goto(`file://${file}`);
    await page.waitForSelector('#status[data-state="attached"]', { state: 'attached' });
    expect(await page.evaluate(widths)).toEqual({ doc: 390, body: 390, header: 390 });
    await page.close();
  });

  it('at 800 px wide: the card shows a long multi-line command whole, above the charts, and its buttons work', async () => {
    const client = await RpcClient.connect(t.server.url, { token: t.token });
    const { sessionId } = await client.call('session/create', {});
    const page = await browser.newPage({ viewport: { width: 800, height: 900 } });
    await page.goto(`${t.server.httpUrl}?token=${t.token}&session=${sessionId}`);
    await page.waitForSelector('#status[data-state="attached"]');
    await client.call('session/attach', { sessionId });
    await client.call('session/input', { sessionId, text: 'run the long command' });
    const card = page.locator(`.approval[data-call-id="t1.s1.c1"]`);
    await card.waitFor();

    // Whole: every character, every line as a line, nothing hidden behind a scroll.
    const what = card.locator('.what');
    expect(await what.textContent()).toBe(LONG_COMMAND);
    expect(await what.innerText()).toBe(LONG_COMMAND);
    expect(await what.evaluate((n) => n.scrollWidth <= n.clientWidth && n.scrollHeight <= n.clientHeight)).toBe(true);
    expect(await card.locator('.summary').textContent()).toMatch(/^bash: /);

    // Above the charts, and so is the input.
    const top = async (selector: string) => (await page.locator(selector).first().boundingBox())!.y;
    const charts = await top('#charts');
    expect(await top('#approvals-panel')).toBeLessThan(charts);
    expect(await top('#input-form')).toBeLessThan(charts);
    expect(await top('.approval[data-call-id="t1.s1.c1"] button[data-action="reject"]')).toBeLessThan(charts);

    // Clickable where it is: playwright clicks only what is visible and not covered (the sticky header included).
    await card.locator('button[data-action="reject"]').click();
    await page.waitForSelector('#timeline li[data-kind="turn/end"]');
    const log = t.sessions.find((x) => x.id === sessionId)!.recorder.entries;
    expect(log.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'rejected' });
    client.close();
    await page.close();
  });
});
