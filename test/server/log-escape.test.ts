/**
 * Caller data in log lines never reaches the operator's terminal as control characters: a webhook
 * payload logged through `core.log` with ESC[2J (clear screen), BEL, a C1 CSI and a newline comes
 * out escaped, in the pretty format and in JSON (which still parses to the same text).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLogLine } from '../../src/server/pretty-log.js';
import { freePort } from '../helpers/net.js';
import { fixtures, killServeChildren, poll, spawnServe, tempDir } from './helpers.js';

const data = tempDir();
afterAll(() => {
  killServeChildren();
  data.remove();
});

const HOSTILE = '\u001b[2J\u0007boom\u009b31m\u007f\nforged line\u001b]0;title\u0007';
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/; // all but the lines' own newline

/** Runs `serve` with one log format, sends the hostile text to `core.log`, returns the output. */
async function logged(format: 'pretty' | 'json', port: number): Promise<string> {
  const served = spawnServe(['--dir', join(fixtures, 'log-escape'), '--port', String(port), '--data', join(data.path, format)], {
    HCM_RUNNER_LOG_FORMAT: format,
    HCM_RUNNER_LOG_LEVEL: 'info',
  });
  const live = await poll(async () => /live: (\S+)/.exec(served.output())?.[1], 30_000);
  const res = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: HOSTILE }) });
  expect(res.status).toBe(200);
  await poll(async () => (served.output().includes('forged line') ? true : undefined));
  served.child.kill('SIGTERM');
  return served.output();
}

describe('control characters in log lines', () => {
  it('the pretty format escapes them', { timeout: 60_000 }, async () => {
    const out = await logged('pretty', await freePort());
    expect(out).not.toMatch(RAW_CONTROL);
    const line = out.split('\n').find((l) => l.includes('boom'))!;
    expect(line).toContain('\\u001b[2J\\u0007boom\\u009b31m\\u007f\\u000aforged line\\u001b]0;title\\u0007');
    expect(out.split('\n').some((l) => l.startsWith('forged line'))).toBe(false);
  });

  it('JSON escapes them and still parses to the same text', { timeout: 60_000 }, async () => {
    const out = await logged('json', await freePort());
    expect(out).not.toMatch(RAW_CONTROL);
    const line = out.split('\n').find((l) => l.includes('boom'))!;
    expect(JSON.parse(line).msg).toBe(HOSTILE);
  });

  it('with colours, only our own colour codes are control characters', () => {
    const line = formatLogLine(JSON.stringify({ level: 30, time: 0, msg: HOSTILE, [`k${HOSTILE}`]: HOSTILE, problems: [HOSTILE] }), { colour: true });
    expect(line.replace(/\u001b\[\d+m/g, '').replace(/\n/g, '')).not.toMatch(RAW_CONTROL);
    expect(line.split('\n').length).toBe(3); // the entry and its one problem, then the end
    expect(formatLogLine(`not json ${HOSTILE}`)).not.toMatch(/\u001b|\u0007/);
  });
});
