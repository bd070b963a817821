/**
 * Loads an integration test file: YAML with positions, the test-file schema
 * (schemas/integration-test.schema.json), the integration it names, and the checks a schema
 * cannot make — step ids in mocks and expectations, trigger data that fits the trigger type,
 * assert expressions that compile. Every problem carries the file, line and column.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { allSteps } from '../definition/control-flow.js';
import { listIntegrationFiles, loadFile, type LoadedFile } from '../definition/load.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from '../definition/limits.js';
import { ProblemSink } from '../definition/problems.js';
import { createAjv, explainErrors } from '../definition/schema-validator.js';
import { closest } from '../definition/suggest.js';
import { compileTemplate } from '../definition/templates.js';
import type { CompiledIntegration, Problem, ValueTemplate } from '../definition/types.js';
import { joinPointer, parseYamlSource, type YamlSource } from '../definition/yaml-source.js';
import { triggerTypeOf, triggerTypes } from '../triggers/registry.js';
import type { CaseExpectation, Mock, MockAnswer, StepExpectation, TestCase, TestSuite, TriggerInput } from './types.js';

export const testSchemaPath = fileURLToPath(new URL('../../schemas/integration-test.schema.json', import.meta.url));

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

let validator: ValidateFunction | undefined;
function testFileValidator(): ValidateFunction {
  validator ??= createAjv().compile(JSON.parse(readFileSync(testSchemaPath, 'utf8')) as Obj);
  return validator;
}

/**
 * Finds integrations by name among the files of a folder (and below), loading each folder once
 * per command run.
 */
export class IntegrationLookup {
  private readonly byDir = new Map<string, LoadedFile[]>();
  private readonly byPath = new Map<string, LoadedFile>();

  /** `limits`: the file limits in force (the commands pass the HCM_RUNNER_MAX_* settings). */
  constructor(private readonly limits: FileLimits = DEFAULT_FILE_LIMITS) {}

  /** `also`: further files with the same name (the reference is ambiguous). */
  byName(name: string, dir: string): { found?: LoadedFile; also: LoadedFile[]; names: string[] } {
    let loaded = this.byDir.get(dir);
    if (!loaded) {
      loaded = listIntegrationFiles([dir]).files.map((f) => this.file(f));
      this.byDir.set(dir, loaded);
    }
    // A file that did not compile is still found by the name it gives ("it has problems", not "not found").
    const [found, ...also] = loaded.filter((l) => (l.integration?.name ?? l.header?.name) === name);
    return { found, also, names: loaded.map((l) => l.integration?.name).filter((n): n is string => !!n) };
  }

  file(path: string): LoadedFile {
    const abs = resolve(path);
    let l = this.byPath.get(abs);
    if (!l) {
      l = loadFile(abs, display(abs), this.limits);
      this.byPath.set(abs, l);
    }
    return l;
  }
}

export interface LoadedTestFile {
  file: string;
  suite?: TestSuite;
  problems: Problem[];
}

export function loadTestFile(path: string, lookup = new IntegrationLookup()): LoadedTestFile {
  const file = display(resolve(path));
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { file, problems: [{ file, line: 1, column: 1, message: `cannot read file: ${(err as Error).message}`, path: '' }] };
  }
  return loadTestText(file, text, dirname(resolve(path)), lookup);
}

/** `dir` is the test file's folder: integration names are looked up there, paths resolved from it. */
export function loadTestText(file: string, text: string, dir: string, lookup = new IntegrationLookup()): LoadedTestFile {
  const src = parseYamlSource(file, text);
  const problems = new ProblemSink(src);
  const syntax = src.syntaxErrors[0];
  if (syntax) {
    problems.add('', syntax.message, syntax.position);
    return { file, problems: problems.problems };
  }
  const doc = src.value;
  if (!isObj(doc)) {
    problems.add('', 'a test file must be a YAML mapping with integration and cases (see docs/testing.md)');
    return { file, problems: problems.problems };
  }
  const validate = testFileValidator();
  if (!validate(doc)) for (const p of explainErrors(validate.errors ?? [])) problems.add(p.pointer, p.message, undefined, p.atKey ? 'key' : 'value');
  // Past schema problems the checks below still run, so one pass reports every mistake.
  if (typeof doc.integration !== 'string' || !Array.isArray(doc.cases)) return { file, problems: problems.problems };

  const integration = resolveIntegration(doc.integration, dir, lookup, problems);
  if (!integration) return { file, problems: problems.problems };
  const checker = new CaseChecker(src, problems, integration, calledSteps(integration, dir, lookup));
  const cases = doc.cases.map((raw, i) => checker.testCase(isObj(raw) ? raw : {}, `/cases/${i}`));
  const names = new Map<string, number>();
  cases.forEach((c, i) => {
    const first = names.get(c.name);
    if (first !== undefined)
      problems.add(`/cases/${i}/name`, `case name "${c.name}" is already used by cases[${first}]; give each case its own name`);
    else names.set(c.name, i);
  });
  if (problems.count) return { file, problems: problems.problems };
  return { file, problems: [], suite: { file, src, integration, cases, dir } };
}

function resolveIntegration(ref: string, dir: string, lookup: IntegrationLookup, problems: ProblemSink): CompiledIntegration | undefined {
  const isPath = /[\\/]/.test(ref) || /\.ya?ml$/i.test(ref);
  let loaded: LoadedFile | undefined;
  if (isPath) {
    loaded = lookup.file(resolve(dir, ref));
    if (!loaded.integration && loaded.problems[0]?.message.startsWith('cannot read file')) {
      problems.add(
        '/integration',
        `no integration file at ${ref} (relative to this test file); give the integration's name or a path relative to this file`,
      );
      return undefined;
    }
  } else {
    const { found, also, names } = lookup.byName(ref, dir);
    if (found && also.length) {
      problems.add(
        '/integration',
        `several files below ${display(dir) || '.'} are named "${ref}" (${[found, ...also].map((l) => l.file).join(', ')}); give the path of the one to test, relative to this file`,
      );
      return undefined;
    }
    if (!found) {
      const hint = closest(ref, names);
      problems.add(
        '/integration',
        `unknown integration "${ref}"${hint ? ` — did you mean "${hint}"?` : ''}; integrations in ${display(dir) || '.'}: ${names.join(', ') || 'none'} (or give a path relative to this file)`,
      );
      return undefined;
    }
    loaded = found;
  }
  if (!loaded.integration) {
    const first = loaded.problems[0];
    problems.add(
      '/integration',
      `integration "${ref}" has ${loaded.problems.length} problem(s); fix them first (hcm-runner validate). First: ${first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : 'unknown'}`,
    );
    return undefined;
  }
  return loaded.integration;
}

/** The step ids of the integrations `integration` calls by name with core.call, and of those they call. */
function calledSteps(integration: CompiledIntegration, dir: string, lookup: IntegrationLookup): string[] {
  const seen = new Set<string>([integration.name]);
  const ids: string[] = [];
  const visit = (i: CompiledIntegration) => {
    for (const call of i.calls ?? []) {
      if (seen.has(call.integration)) continue;
      seen.add(call.integration);
      const child = lookup.byName(call.integration, dir).found?.integration;
      if (!child) continue;
      ids.push(...allSteps(child).map((s) => s.id));
      visit(child);
    }
  };
  visit(integration);
  return ids;
}

class CaseChecker {
  private readonly stepIds: string[];

  constructor(
    private readonly src: YamlSource,
    private readonly problems: ProblemSink,
    private readonly integration: CompiledIntegration,
    called: string[] = [],
  ) {
    // Nested steps and onFailure too: mocks and expectations reach every step by its id; mocks
    // also reach the steps of the sub-flows it calls (they run with the case's mocks).
    this.stepIds = [...allSteps(integration).map((s) => s.id), ...called];
  }

  testCase(raw: Obj, at: string): TestCase {
    const trigger = (isObj(raw.trigger) ? raw.trigger : {}) as TriggerInput;
    this.checkTrigger(trigger, joinPointer(at, 'trigger'));
    const config = isObj(raw.config) ? raw.config : undefined;
    if (config) this.checkConfig(config, joinPointer(at, 'config'));
    const mocks: Record<string, Mock> = {};
    for (const [id, m] of Object.entries(isObj(raw.mocks) ? raw.mocks : {})) {
      const pointer = joinPointer(at, 'mocks', id);
      this.checkStepId(id, pointer, 'mocks');
      const mock = isObj(m) ? m : {};
      mocks[id] = Array.isArray(mock.calls)
        ? { kind: 'calls', answers: mock.calls as MockAnswer[], pointer }
        : { kind: 'every', answer: mock as MockAnswer, pointer };
    }
    const callbacks: TestCase['callbacks'] = {};
    for (const [id, cb] of Object.entries(isObj(raw.callbacks) ? raw.callbacks : {})) {
      const pointer = joinPointer(at, 'callbacks', id);
      this.checkStepId(id, pointer, 'callbacks');
      callbacks[id] = { ...(isObj(cb) ? cb : {}), pointer };
    }
    return {
      name: String(raw.name),
      pointer: at,
      trigger,
      config,
      mocks,
      callbacks,
      expect: this.expectation(isObj(raw.expect) ? raw.expect : {}, joinPointer(at, 'expect')),
    };
  }

  private checkTrigger(trigger: TriggerInput, at: string): void {
    const t = this.integration.trigger;
    const { keys: allowed, what, problems } = triggerTypeOf(t).caseKeys(t);
    for (const key of Object.keys(trigger)) {
      if (!allowed.includes(key)) {
        this.problems.add(joinPointer(at, key), `trigger.${key} does not apply to ${what}; use ${allowed.join(', ')}`, undefined, 'key');
      }
    }
    for (const p of problems?.(trigger) ?? []) this.problems.add(joinPointer(at, p.key), p.message, undefined, 'key');
  }

  private checkConfig(config: Obj, at: string): void {
    const known = this.integration.config.kind === 'object' ? this.integration.config.entries.map(([k]) => k) : [];
    for (const key of Object.keys(config)) {
      if (known.includes(key)) continue;
      const hint = closest(key, known);
      this.problems.add(
        joinPointer(at, key),
        `config key "${key}" is not in the integration's config${hint ? ` — did you mean "${hint}"?` : ''}; its keys: ${known.join(', ') || 'none'}`,
        undefined,
        'key',
      );
    }
  }

  private checkStepId(id: string, pointer: string, where: string): void {
    if (this.stepIds.includes(id)) return;
    const hint = closest(id, this.stepIds);
    this.problems.add(
      pointer,
      `${where}: unknown step "${id}"${hint ? ` — did you mean "${hint}"?` : ''}; steps of ${this.integration.name}: ${this.stepIds.join(', ')}`,
      undefined,
      'key',
    );
  }

  private expectation(raw: Obj, at: string): CaseExpectation {
    const out: CaseExpectation = { steps: {}, assert: [] };
    if (raw.status !== undefined) out.status = raw.status as CaseExpectation['status'];
    if (isObj(raw.response)) {
      const t = this.integration.trigger;
      if (!triggerTypeOf(t).webhook) {
        const answering = triggerTypes.filter((type) => type.webhook).map((type) => type.spec.type);
        this.problems.add(
          joinPointer(at, 'response'),
          `expect.response applies to ${answering.join(' and ')} triggers only; a ${t.type} trigger has no caller to answer`,
          undefined,
          'key',
        );
      }
      const r = raw.response;
      out.response = {
        statusCode: r.statusCode as number | undefined,
        headers: r.headers as Record<string, string> | undefined,
        body: r.body,
        hasBody: 'body' in r,
      };
    }
    for (const [id, e] of Object.entries(isObj(raw.steps) ? raw.steps : {})) {
      this.checkStepId(id, joinPointer(at, 'steps', id), 'expect.steps');
      const step = isObj(e) ? e : {};
      out.steps[id] = {
        status: step.status as StepExpectation['status'],
        results: step.results,
        error: step.error as Obj | undefined,
        attempts: step.attempts as number | undefined,
        has: { results: 'results' in step, error: 'error' in step },
      };
    }
    const asserts = Array.isArray(raw.assert) ? raw.assert : [];
    asserts.forEach((a, i) => {
      const pointer = joinPointer(at, 'assert', i);
      const before = this.problems.count;
      const t: ValueTemplate = compileTemplate(a, pointer, this.src, this.problems);
      if (t.kind === 'expr') {
        this.checkReferences(t.source, pointer);
        out.assert.push(t);
      } else if (this.problems.count === before) {
        this.problems.add(pointer, 'an assert must be an expression {% … %}');
      }
    });
    return out;
  }

  /** `$steps.<id>` / `$errors.<id>` in an assert must name a step of the integration. */
  private checkReferences(source: string, pointer: string): void {
    for (const m of source.matchAll(/\$(steps|errors)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
      const ref = m[2]!;
      if (this.stepIds.includes(ref)) continue;
      const hint = closest(ref, this.stepIds);
      this.problems.add(
        pointer,
        `$${m[1]}.${ref}: no step "${ref}" in ${this.integration.name}${hint ? ` — did you mean "${hint}"?` : ''}; steps: ${this.stepIds.join(', ')}`,
      );
    }
  }
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
