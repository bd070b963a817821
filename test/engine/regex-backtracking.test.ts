/**
 * A caller's text cannot hold the process with a backtracking regex: `hcm-runner run` (a real
 * child process, so a hang is a killed child, not a stuck test) matches patterns with nested
 * quantifiers against 20 000 characters and answers. Without the linear-time fallback that
 * engine/expression-guard.ts turns on, the first of these would not finish in a lifetime.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'hcm-regex-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('regular expressions on hostile text', () => {
  it('patterns with nested quantifiers answer on 20 000 characters', () => {
    const payload = join(tmp, 'hostile.json');
    writeFileSync(payload, JSON.stringify({ s: `${'a'.repeat(20_000)}!` }));
    const r = cli(['run', 'test/fixtures/cli/regex-backtracking.yaml', '--payload', payload, '--data', join(tmp, 'data')]);
    expect(r.code, r.stderr).toBe(0); // -1: killed after 60 s
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', result: { nested: 0, alternation: false, replaced: 20_001 } });
  });
});
