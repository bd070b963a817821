/**
 * `rateLimit` and `maxConcurrent` on a connection are checked when the file loads (from their
 * declaration, src/connectors/connection-limits.ts): a bad value is reported at its line and
 * column, saying what is expected; env values and expressions are left for run time.
 */
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';

function problems(limits: string): string[] {
  const yaml = `name: t
connections:
  hcm:
    type: hcm-oauth2
    authorizeUrl: http://127.0.0.1:9/a
    tokenUrl: http://127.0.0.1:9/t
    apiUrl: http://127.0.0.1:9/ccx
    clientId: c
    clientSecret: s
${limits}
trigger: { type: webhook }
steps:
  - id: s
    action: hcm.listOrganizations
`;
  return loadText('limits.yaml', yaml).problems.map((p) => `${p.line}:${p.column} ${p.message}`);
}

describe('connection limits at load time', () => {
  it('accepts the documented forms', () => {
    expect(problems('    rateLimit: { requests: 10, per: 1s }\n    maxConcurrent: 4')).toEqual([]);
    expect(problems('    rateLimit: { requests: 600, per: 1m }')).toEqual([]);
    expect(
      problems('    rateLimit: { requests: { env: HCM_RATE }, per: { env: HCM_RATE_PER, default: 1s } }\n    maxConcurrent: { env: HCM_MAX }'),
    ).toEqual([]);
  });

  it.each([
    ['    maxConcurrent: 0', '10:20 connections.hcm.maxConcurrent must be an integer from 1 to 10000'],
    ['    maxConcurrent: 2.5', '10:20 connections.hcm.maxConcurrent must be an integer from 1 to 10000'],
    ['    maxConcurrent: lots', '10:20 connections.hcm.maxConcurrent must be an integer from 1 to 10000'],
    ['    rateLimit: { requests: 0, per: 1s }', '10:28 connections.hcm.rateLimit.requests must be an integer from 1 to 10000'],
    ['    rateLimit: { requests: 20000, per: 1s }', '10:28 connections.hcm.rateLimit.requests must be an integer from 1 to 10000'],
    ['    rateLimit: { requests: 10, per: 0s }', '10:37 connections.hcm.rateLimit.per must be a duration such as 1s, 500ms or 1m'],
    ['    rateLimit: { requests: 10, per: 1 second }', '10:37 connections.hcm.rateLimit.per must be a duration'],
    ['    rateLimit: { requests: 10 }', '10:16 connections.hcm.rateLimit is missing required key "per"'],
    ['    rateLimit: { requests: 10, per: 1s, burst: 5 }', '10:41 unknown key "burst" in connections.hcm.rateLimit; allowed: requests, per'],
    ['    rateLimit: 10', '10:16 connections.hcm.rateLimit must be an object'],
  ])('%s → %s', (limits, expected) => {
    const found = problems(limits);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(expected);
  });
});
