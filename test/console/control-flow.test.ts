/**
 * The execution page's nested timeline (docs/console.md "An execution") in a real browser: a
 * parallel forEach group's iterations collapsible and overlapping on the time axis, a switch's
 * case, core.call's link to its child and the child's link back, onFailure's own section, and a
 * record with 100,000 iterations drawn bounded.
 */
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ExecutionRecord } from '../../src/engine/record.js';
import { root, type SlowUpstream, slowUpstream, startTestServer, type TestServer } from '../server/helpers.js';
import { launchBrowser, newContext, screenshot, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

const fixtures = join(root, 'test', 'fixtures', 'console', 'control-flow');
let slow: SlowUpstream;
let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Every iteration waits 400 ms on this: three at once (concurrency 3) overlap by most of that.
  slow = await slowUpstream(400);
  s = await startTestServer({ dir: fixtures, slowUrl: slow.url });
  browser = await launchBrowser();
  page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await slow?.close();
});

/** The bar's [left, right] in percent of the track, as the page placed it. */
async function barExtent(track: Locator): Promise<[number, number]> {
  const style = (await track.locator('.bar').getAttribute('style')) ?? '';
  const left = Number(/margin-left:([\d.]+)%/.exec(style)?.[1]);
  const width = Number(/width:([\d.]+)%/.exec(style)?.[1]);
  return [left, left + width];
}

describe('nested timeline', () => {
  it('shows a parallel group’s iterations (collapsible, overlapping), the case that ran, and links between parent and child', async () => {
    const { executionId } = (await s.api('POST', '/integrations/fan-out/run', { type: 'hire', workers: ['w1', 'w2', 'w3'] })).body;
    const record = await s.waitForExecution(executionId);
    expect(record.status, JSON.stringify(record.error)).toBe('succeeded');

    await page.goto(`/console/executions/${executionId}`);
    const timeline = page.getByRole('table', { name: 'Step timeline' });
    await timeline.getByRole('row', { name: /^each group.*succeeded/ }).waitFor();

    // The group's iterations, each a <details> labelled by its index, closed until opened.
    const iterations = timeline.getByRole('list', { name: 'Iterations of each' }).locator('details');
    expect(await iterations.count()).toBe(3);
    expect(await iterations.locator('summary').allTextContents()).toEqual([
      expect.stringMatching(/^iteration 0/),
      expect.stringMatching(/^iteration 1/),
      expect.stringMatching(/^iteration 2/),
    ]);
    const second = iterations.nth(1);
    const inner = second.getByRole('table', { name: 'each iteration 1' });
    expect(await inner.isVisible()).toBe(false);
    await second.locator('summary').click();
    await inner.getByRole('row', { name: /fetch.*core\.http.*succeeded/ }).waitFor({ state: 'visible' });
    await inner.getByRole('row', { name: /label.*core\.transform.*succeeded/ }).waitFor({ state: 'visible' });
    // Indented under the group: the nested step's first cell starts further right than the group's.
    const groupCell = await timeline
      .getByRole('row', { name: /^each group/ })
      .getByRole('cell')
      .first()
      .boundingBox();
    const innerCell = await inner
      .getByRole('row', { name: /^fetch/ })
      .getByRole('cell')
      .first()
      .boundingBox();
    const indentOf = async (l: Locator) => Number.parseFloat(await l.evaluate((e) => getComputedStyle(e).paddingLeft));
    expect(
      innerCell!.x +
        (await indentOf(
          inner
            .getByRole('row', { name: /^fetch/ })
            .getByRole('cell')
            .first(),
        )),
    ).toBeGreaterThan(
      groupCell!.x +
        (await indentOf(
          timeline
            .getByRole('row', { name: /^each group/ })
            .getByRole('cell')
            .first(),
        )) +
        10,
    );

    // concurrency 3: the iterations ran at once, so their bars overlap on the execution's axis.
    const bars = await Promise.all([0, 1, 2].map((i) => barExtent(iterations.nth(i).locator('summary .track'))));
    for (const [a, b] of [
      [0, 1],
      [1, 2],
      [0, 2],
    ])
      expect(Math.min(bars[a]![1], bars[b]![1]) - Math.max(bars[a]![0], bars[b]![0]), JSON.stringify(bars)).toBeGreaterThan(5);

    // The switch says which case ran; its step is nested under it and links to the child execution.
    await timeline.getByRole('row', { name: /^route switch case hire.*succeeded/ }).waitFor();
    const routeSteps = timeline.getByRole('table', { name: 'Steps of route' });
    const childId: string = record.steps[1].steps[0].childExecutionId;
    expect(childId).toBeTruthy();
    await screenshot(page, 'execution-control-flow');
    await routeSteps
      .getByRole('row', { name: /^onboard core\.call/ })
      .getByRole('link', { name: /child execution/ })
      .click();
    await page.waitForURL(`**/console/executions/${childId}`);
    await page.getByRole('heading', { name: /Execution/ }).waitFor();
    await page
      .getByRole('table', { name: 'Step timeline' })
      .getByRole('row', { name: /greeting.*succeeded/ })
      .waitFor();

    // …and the child links back to its parent (and names the calling step).
    expect(await page.getByText('Called by').count()).toBe(1);
    await page.getByRole('link', { name: /parent execution/ }).click();
    await page.waitForURL(`**/console/executions/${executionId}`);
    await page.getByRole('table', { name: 'Step timeline' }).waitFor();
  });

  it('onFailure has its own section; a failed nested step shows its error under it', async () => {
    const { executionId } = (await s.api('POST', '/integrations/fan-out/run', { type: 'promotion', workers: ['w1'] })).body;
    const record = await s.waitForExecution(executionId);
    expect(record.status).toBe('failed');
    expect(record.onFailure?.status).toBe('succeeded');

    await page.goto(`/console/executions/${executionId}`);
    const timeline = page.getByRole('table', { name: 'Step timeline' });
    await timeline.getByRole('row', { name: /^route switch case default.*failed/ }).waitFor();
    const steps = timeline.getByRole('table', { name: 'Steps of route' });
    await steps.getByRole('row', { name: /unknownType core\.fail.*failed/ }).waitFor();
    await steps.getByText('unknown event type promotion').waitFor();

    const section = page.getByRole('region', { name: /On failure/ });
    await section
      .getByRole('table', { name: 'onFailure timeline' })
      .getByRole('row', { name: /alert core\.log.*succeeded/ })
      .waitFor();
  });

  it('a record with 100,000 iterations draws the first 100 and says the API has the rest', async () => {
    const at = new Date().toISOString();
    const id = '0190a0a0-0000-7000-8000-00000000beef';
    const record: ExecutionRecord = {
      id,
      integration: 'fan-out',
      status: 'succeeded',
      test: true,
      attempt: 1,
      trigger: {},
      log: [],
      startedAt: at,
      finishedAt: at,
      steps: [
        {
          id: 'each',
          action: 'group',
          status: 'succeeded',
          startedAt: at,
          finishedAt: at,
          iterations: Array.from({ length: 100_000 }, (_, index) => ({
            index,
            steps: [{ id: 'label', action: 'core.transform', status: 'succeeded' as const, startedAt: at, finishedAt: at }],
          })),
        },
      ],
    };
    await s.runtime.store.saveExecution(record, { stored: false });
    const res = await page.goto(`/console/executions/${id}`);
    expect(res!.status()).toBe(200);
    const group = page.getByRole('list', { name: 'Iterations of each' });
    expect(await group.locator('details').count()).toBe(100);
    await group.getByText(/and 99,900 more iterations, not drawn here/).waitFor();
    expect((await res!.body()).length).toBeLessThan(1_000_000);
  });
});
