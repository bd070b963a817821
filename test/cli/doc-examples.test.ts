/**
 * The examples run as written against the shipped HCM sandbox, so a broken example fails CI:
 * - every example in integrations/ has a test file, and the test files pass;
 * - the mocks of every test case — the example test files, and the test files the README and
 *   docs/testing.md show — tell the truth: run against the sandbox without them, a case ends the
 *   same way, each step answers what its mock claimed (the same keys, nested, of the same types)
 *   and a 4xx error mock is what the sandbox answers too (outages — 5xx, 429, network errors —
 *   and `calls` sequences stay mocked: the sandbox cannot produce them on demand);
 * - the README's payloads answer what the README says;
 * - docs/authoring.md's complete integrations validate, and the runnable ones — and its runnable
 *   lists of steps — succeed against the sandbox.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadFiles, loadText } from '../../src/definition/load.js';
import { callHost } from '../../src/triggers/call/children.js';
import type { CompiledIntegration } from '../../src/definition/types.js';
import type { StepRecord } from '../../src/engine/record.js';
import { runExecution } from '../../src/engine/run.js';
import type { CaseResult } from '../../src/testing/run-case.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { counts, type TestReport } from '../../src/testing/report.js';
import { runTestFiles } from '../../src/testing/run-files.js';
import { manualTriggerData } from '../../src/triggers/manual.js';
import { repoRoot } from '../helpers/cli.js';
import { testServices } from '../helpers/engine.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';

const tmp = mkdtempSync(join(tmpdir(), 'hcm-doc-examples-'));
const examplesDir = join(repoRoot, 'integrations');
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

let sb: Sandbox;
/** An environment pointing the examples' connections at the sandbox, with a fresh refresh token. */
const env = (): NodeJS.ProcessEnv => ({ ...process.env, ...sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }), HCM_TENANT: 'sandbox' });

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
});
afterAll(async () => {
  await sb?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The fenced blocks of a markdown file in one language, with the line each starts on. */
function blocks(file: string, lang: string): Array<{ text: string; line: number }> {
  const text = read(file);
  const out: Array<{ text: string; line: number }> = [];
  const re = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm');
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ text: m[1]!, line: text.slice(0, m.index).split('\n').length });
  return out;
}

const exampleFiles = () => readdirSync(examplesDir).filter((f) => /\.ya?ml$/.test(f) && !f.includes('.test.'));
const exampleTestFiles = () => readdirSync(examplesDir).filter((f) => f.includes('.test.'));

function failuresOf(report: TestReport): string[] {
  return [
    ...report.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`),
    ...report.files.flatMap((f) =>
      f.cases.filter((c) => !c.passed).map((c) => `${f.file} › ${c.name}: ${c.failures.map((x) => x.message).join('; ')}`),
    ),
  ];
}

/**
 * Where `mock`'s shape is not in `real`: every key of a mocked object must be there, nested the
 * same way, with a value of the same type (a mock's values are made up; its shape must not be).
 */
function shapeGaps(mock: unknown, real: unknown, path = ''): string[] {
  if (mock === null || mock === undefined) return [];
  if (Array.isArray(mock)) {
    if (!Array.isArray(real)) return [`${path || '.'}: an array in the mock, ${JSON.stringify(real)} from the sandbox`];
    if (real.length === 0) return [];
    return mock.flatMap((m, i) => shapeGaps(m, real[0], `${path}[${i}]`));
  }
  if (typeof mock === 'object') {
    if (!real || typeof real !== 'object' || Array.isArray(real))
      return [`${path || '.'}: an object in the mock, ${JSON.stringify(real)} from the sandbox`];
    return Object.entries(mock).flatMap(([k, v]) =>
      k in real ? shapeGaps(v, (real as Record<string, unknown>)[k], `${path}.${k}`) : [`${path}.${k}: in the mock, not in the sandbox's answer`],
    );
  }
  return typeof mock === typeof real ? [] : [`${path}: a ${typeof mock} in the mock, ${JSON.stringify(real)} from the sandbox`];
}

interface Claim {
  file: string;
  name: string;
  status?: string;
  /** Step id → the results its mock answered. */
  results: Record<string, unknown>;
  /** Step id → the 4xx status its error mock answered. */
  errors: Record<string, number>;
}

/**
 * The test file without the mocks that claim something about the service (results, 4xx errors)
 * and with only the expected status: what the sandbox then answers is compared with the claims.
 */
function unmocked(source: string, text: string): { text: string; claims: Claim[] } {
  const doc = parse(text) as { cases: Array<{ name: string; mocks?: Record<string, Record<string, unknown>>; expect?: { status?: string } }> };
  const claims: Claim[] = [];
  for (const c of doc.cases) {
    const claim: Claim = { file: source, name: c.name, status: c.expect?.status, results: {}, errors: {} };
    for (const [step, mock] of Object.entries(c.mocks ?? {})) {
      const status = (mock.error as { statusCode?: number } | undefined)?.statusCode;
      if ('results' in mock) claim.results[step] = mock.results;
      else if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) claim.errors[step] = status;
      else continue;
      delete c.mocks![step];
    }
    c.expect = c.expect?.status ? { status: c.expect.status } : {};
    claims.push(claim);
  }
  return { text: stringify(doc), claims };
}

/** The test files the README and docs/testing.md show, as [where, text]. */
function docTestFiles(): Array<[string, string]> {
  return [
    ...blocks('README.md', 'yaml').filter((b) => /^cases:/m.test(b.text)),
    ...blocks('docs/testing.md', 'yaml').filter((b) => /^cases:/m.test(b.text)),
  ].map((b, i) => [`doc block ${i + 1} (line ${b.line})`, b.text]);
}

describe('the example integrations', () => {
  it('each has a test file, and the test files pass (with the docs’ test files beside them)', async () => {
    const examples = exampleFiles();
    expect(examples.length).toBeGreaterThan(0);
    const tests = new Set(exampleTestFiles());
    for (const f of examples) expect(tests, `${f} has no test file`).toContain(f.replace(/\.ya?ml$/, '.test.yaml'));

    const dir = join(tmp, 'offline');
    cpSync(examplesDir, dir, { recursive: true });
    for (const [i, [, text]] of docTestFiles().entries()) writeFileSync(join(dir, `doc-${i}.test.yaml`), text);
    const files = readdirSync(dir)
      .filter((f) => f.includes('.test.'))
      .map((f) => join(dir, f));
    const report = await runTestFiles(files, { env: { ...process.env, HCM_API_URL: 'http://127.0.0.1:9/nowhere' } });
    expect(failuresOf(report)).toEqual([]);
    expect(counts(report).passed).toBeGreaterThan(0);
  });

  it('the mocks of every case tell the truth: without them, against the sandbox, the case ends the same', { timeout: 60_000 }, async () => {
    const dir = join(tmp, 'sandbox');
    mkdirSync(dir);
    for (const f of exampleFiles()) cpSync(join(examplesDir, f), join(dir, f));
    const sources: Array<[string, string]> = [
      ...exampleTestFiles().map((f): [string, string] => [`integrations/${f}`, readFileSync(join(examplesDir, f), 'utf8')]),
      ...docTestFiles(),
    ];
    const claims: Claim[] = [];
    const files = sources.map(([source, text], i) => {
      const u = unmocked(source, text);
      claims.push(...u.claims);
      const file = join(dir, `claims-${i}.test.yaml`);
      writeFileSync(file, u.text);
      return file;
    });
    const report = await runTestFiles(files, { env: env(), sandbox: true });
    expect(report.problems).toEqual([]);
    const ran = report.files.flatMap((f) => f.cases);
    expect(ran).toHaveLength(claims.length);
    const gaps: string[] = [];
    ran.forEach((c, i) => {
      const claim = claims[i]!;
      const where = `${claim.file} › ${claim.name}`;
      expect(c.name).toBe(claim.name);
      if (claim.status && c.status !== claim.status) gaps.push(`${where}: ${c.status} against the sandbox, expected ${claim.status}`);
      for (const [id, results] of Object.entries(claim.results)) {
        const step = findStep(c, id);
        if (step?.status !== 'succeeded')
          gaps.push(`${where}: step ${id} ${step?.status ?? 'missing'} against the sandbox: ${step?.error?.message ?? ''}`);
        else gaps.push(...shapeGaps(results, step.results).map((g) => `${where}: step ${id} ${g}`));
      }
      for (const [id, status] of Object.entries(claim.errors)) {
        const step = findStep(c, id);
        if (step?.error?.status !== status)
          gaps.push(`${where}: step ${id}'s mock answers ${status}; the sandbox: ${step?.status} ${step?.error?.status ?? ''}`);
      }
    });
    expect(gaps).toEqual([]);
  });
});

/** The first record of step `id` in a case's execution or the sub-flows it called, nested steps included. */
function findStep(c: CaseResult, id: string): StepRecord | undefined {
  const walk = (steps: readonly StepRecord[] | undefined): StepRecord | undefined => {
    for (const s of steps ?? []) {
      const found = s.id === id ? s : (walk(s.steps) ?? s.iterations?.map((it) => walk(it.steps)).find(Boolean));
      if (found) return found;
    }
    return undefined;
  };
  for (const r of [c.execution, ...(c.children ?? [])]) {
    const found = walk(r?.steps) ?? walk(r?.onFailure?.steps);
    if (found) return found;
  }
  return undefined;
}

/** Compiles `yaml` (problems fail the test) and runs it once against the sandbox. */
async function runAgainstSandbox(yaml: string, payload: unknown, where: string) {
  const loaded = loadText(`${where}.yaml`, yaml);
  expect(loaded.problems, `${where}: ${JSON.stringify(loaded.problems)}`).toEqual([]);
  const integration = loaded.integration as CompiledIntegration;
  // core.call runs the example integrations (the docs call the worker-card sub-flow).
  const examples = new Map(
    loadFiles(exampleFiles().map((f) => join(examplesDir, f))).flatMap((l) => (l.integration ? [[l.integration.name, l.integration] as const] : [])),
  );
  const services = testServices();
  const call = callHost(
    (name) => examples.get(name),
    (child, run) => runExecution({ integration: child, services, env: env(), ...run }),
  );
  return runExecution({ integration, trigger: manualTriggerData(integration, payload), services, env: env(), call });
}

describe('the README', () => {
  const readme = read('README.md');

  it('the curl example answers what the README prints', async () => {
    const m = /-d '(\{.*\})'\n# (\{.*\})/.exec(readme);
    expect(m, 'curl example with its answer not found').not.toBeNull();
    const r = await runAgainstSandbox(read('integrations/worker-lookup.yaml'), JSON.parse(m![1]!), 'worker-lookup');
    expect(r.status, JSON.stringify(r.error)).toBe('succeeded');
    expect(r.response?.body).toEqual(JSON.parse(m![2]!));
  });

  it('the payloads of the run example and the console tour succeed', async () => {
    const payloads = [...readme.matchAll(/(?:echo '|type `)(\{"workerId": "[^"]*"\})/g)].map((m) => m[1]!);
    expect(payloads.length).toBeGreaterThanOrEqual(2);
    for (const p of payloads) {
      const r = await runAgainstSandbox(read('integrations/worker-lookup.yaml'), JSON.parse(p), 'worker-lookup');
      expect(r.status, `${p}: ${JSON.stringify(r.error)}`).toBe('succeeded');
    }
  });
});

describe('docs/authoring.md', () => {
  const yamlBlocks = blocks('docs/authoring.md', 'yaml');
  /** Calls hosts that only stand for "a third party" (example.com …): validated, never run. */
  const offline = (text: string) => /example\.com|third\.party/.test(text);
  /** One payload that gives every example what it reads. */
  const payload = {
    type: 'hire',
    name: 'Ada',
    workerId: 'Employee_ID=21001',
    workerIds: ['Employee_ID=21001', 'Employee_ID=21002'],
    people: [{ name: 'Ada' }, { name: 'Grace' }],
  };

  it('its complete integrations validate, and the runnable ones succeed against the sandbox', { timeout: 60_000 }, async () => {
    const complete = yamlBlocks.filter((b) => /^name:/m.test(b.text) && /^steps:/m.test(b.text));
    expect(complete.length).toBeGreaterThanOrEqual(4);
    for (const b of complete) {
      const where = `docs/authoring.md:${b.line}`;
      const loaded = loadText(`${where}.yaml`, b.text);
      expect(loaded.problems, `${where}: ${JSON.stringify(loaded.problems)}`).toEqual([]);
      if (offline(b.text)) continue;
      const r = await runAgainstSandbox(b.text, payload, where);
      expect(r.status, `${where}: ${JSON.stringify(r.error)}`).toBe('succeeded');
      expect(
        r.steps.filter((s) => s.status === 'failed').map((s) => s.id),
        where,
      ).toEqual([]);
    }
  });

  it('its lists of steps run as written, after a `worker` lookup when they read one', { timeout: 60_000 }, async () => {
    const lists = yamlBlocks.filter((b) => !/^name:/m.test(b.text) && /^(steps:|\s+- id:)/m.test(b.text) && !offline(b.text));
    expect(lists.length).toBeGreaterThanOrEqual(3);
    for (const b of lists) {
      const where = `docs/authoring.md:${b.line}`;
      const parsed = parse(b.text) as { steps?: Array<{ id: string }> } | Array<{ id: string }>;
      const steps = Array.isArray(parsed) ? parsed : parsed.steps!;
      const needsWorker = b.text.includes('$steps.worker') && !steps.some((s) => s.id === 'worker');
      const integration = {
        name: 'doc-steps',
        connections: {
          hcm: {
            type: 'hcm-oauth2',
            ...Object.fromEntries(
              [
                ['authorizeUrl', 'HCM_AUTHORIZE_URL'],
                ['tokenUrl', 'HCM_TOKEN_URL'],
                ['apiUrl', 'HCM_API_URL'],
                ['tenantId', 'HCM_TENANT'],
                ['clientId', 'HCM_CLIENT_ID'],
                ['clientSecret', 'HCM_CLIENT_SECRET'],
                ['refreshToken', 'HCM_REFRESH_TOKEN'],
              ].map(([k, v]) => [k, { env: v }]),
            ),
          },
        },
        trigger: { type: 'webhook' },
        steps: [
          ...(needsWorker ? [{ id: 'worker', action: 'hcm.getStaffingWorkerById', inputs: { workerId: '{% $trigger.body.data.workerId %}' } }] : []),
          ...steps,
        ],
      };
      const r = await runAgainstSandbox(stringify(integration), payload, where);
      expect(r.status, `${where}: ${JSON.stringify(r.error)}`).toBe('succeeded');
      expect(
        r.steps.filter((s) => s.status === 'failed').map((s) => `${s.id}: ${s.error?.message}`),
        where,
      ).toEqual([]);
    }
  });
});
