/**
 * Compiles a parsed integration file: schema validation, the checks a schema cannot express
 * (unique ids, known actions and connections, step references, cron, time zones, each step's
 * inputs against its action's own schema) and the compiled form the runtime uses.
 */
import { createHash } from 'node:crypto';
import { findAction, actionKeys } from '../connectors/catalog.js';
import type { ActionDeclaration } from '../connectors/types.js';
import { checkInputs } from './input-checks.js';
import { ProblemSink } from './problems.js';
import { validateAgainstSchema } from './schema-validator.js';
import { documentOptions, retryOptions, stepOptions } from './file-spec.js';
import { defaultOf, enumValue, numberValue, type TriggerCompileContext } from './spec.js';
import { findTriggerSpec } from '../triggers/registry.js';
import { webhookSpec } from '../triggers/webhook/spec.js';
import { closest } from './suggest.js';
import { compileTemplate, expressionsIn } from './templates.js';
import type { CompiledIntegration, CompiledStep, CompiledTrigger, ConnectionDefinition, Problem, RetryPolicy, ValueTemplate } from './types.js';
import { joinPointer, type YamlSource } from './yaml-source.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from './limits.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export interface CompileResult {
  integration?: CompiledIntegration;
  problems: Problem[];
}

export function compileIntegration(src: YamlSource, limits: FileLimits = DEFAULT_FILE_LIMITS): CompileResult {
  const problems = new ProblemSink(src);
  // YAML errors cascade: after the first one the parser's view of the file is unreliable.
  const firstSyntaxError = src.syntaxErrors[0];
  if (firstSyntaxError) problems.add('', firstSyntaxError.message, firstSyntaxError.position);
  if (problems.count) return { problems: problems.problems };

  const doc = src.value;
  if (!isObj(doc)) {
    problems.add('', 'the file must be a YAML mapping with name, trigger and steps (see docs/authoring.md)');
    return { problems: problems.problems };
  }
  // Before anything that grows with the step count: a 10,000-step file is refused, not compiled.
  if (tooManySteps(doc, limits.maxSteps, problems)) return { problems: problems.problems };
  for (const p of validateAgainstSchema(doc)) problems.add(p.pointer, p.message, undefined, p.atKey ? 'key' : 'value');

  const c = new Compiler(src, problems, doc);
  const integration = c.compile();
  return problems.count ? { problems: problems.problems } : { integration, problems: [] };
}

/** Reports each step list longer than `max` at its first step past the limit. */
function tooManySteps(doc: Obj, max: number, problems: ProblemSink): boolean {
  const trigger = isObj(doc.trigger) ? doc.trigger : {};
  const lists: Array<[string, unknown]> = [
    ['/steps', doc.steps],
    ['/trigger/subscribe', trigger.subscribe],
    ['/trigger/unsubscribe', trigger.unsubscribe],
  ];
  let found = false;
  for (const [pointer, list] of lists) {
    if (!Array.isArray(list) || list.length <= max) continue;
    found = true;
    problems.add(
      joinPointer(pointer, max),
      `${pointer.slice(1).replace('/', '.')} has ${list.length} steps; at most ${max} are allowed (HCM_RUNNER_MAX_STEPS) — split the work into several integrations`,
    );
  }
  return found;
}

class Compiler implements TriggerCompileContext {
  private readonly connections: Record<string, ConnectionDefinition> = {};

  constructor(
    private readonly src: YamlSource,
    private readonly problems: ProblemSink,
    private readonly doc: Obj,
  ) {}

  compile(): CompiledIntegration {
    const doc = this.doc;
    const config = this.template(isObj(doc.config) ? doc.config : {}, '/config');
    if (isObj(doc.connections)) {
      for (const [name, conn] of Object.entries(doc.connections)) {
        if (!isObj(conn)) continue;
        this.connections[name] = { type: String(conn.type), config: this.template(conn, joinPointer('/connections', name)) };
      }
    }
    const trigger = this.trigger(isObj(doc.trigger) ? doc.trigger : {});
    const steps = this.stepList(doc.steps, '/steps', 'steps');
    const text = this.src.text;
    const integration: CompiledIntegration = {
      name: String(doc.name ?? ''),
      description: typeof doc.description === 'string' ? doc.description : undefined,
      enabled: typeof doc.enabled === 'boolean' ? doc.enabled : defaultOf<boolean>(documentOptions, 'enabled'),
      file: this.src.file,
      // Computed when first compared (a reload): a start compares none.
      get hash(): string {
        const hash = createHash('sha256').update(text).digest('hex');
        Object.defineProperty(integration, 'hash', { value: hash, configurable: true, enumerable: true, writable: true });
        return hash;
      },
      config,
      connections: this.connections,
      trigger,
      steps,
    };
    return integration;
  }

  template(value: unknown, pointer: string): ValueTemplate {
    return compileTemplate(value, pointer, this.src, this.problems);
  }

  stepList(list: unknown, pointer: string, what: string): CompiledStep[] {
    if (!Array.isArray(list)) return [];
    const seen = new Map<string, number>();
    const steps: CompiledStep[] = [];
    list.forEach((raw, i) => {
      const at = joinPointer(pointer, i);
      if (!isObj(raw)) return;
      const id = typeof raw.id === 'string' ? raw.id : `#${i}`;
      if (seen.has(id)) {
        this.problems.add(joinPointer(at, 'id'), `step id "${id}" is already used by ${what}[${seen.get(id)}]; step ids must be unique`);
      } else seen.set(id, i);
      const step = this.step(raw, at, id);
      if (step)
        this.checkReferences(
          step,
          [...seen.keys()].filter((k) => k !== id),
          list,
        );
      if (step) steps.push(step);
    });
    return steps;
  }

  step(raw: Obj, at: string, id: string): CompiledStep | undefined {
    const action = this.action(raw.action, joinPointer(at, 'action'));
    const inputsRaw = isObj(raw.inputs) ? raw.inputs : {};
    const inputs = this.template(inputsRaw, joinPointer(at, 'inputs'));
    const connection = action ? this.stepConnection(raw.connection, action, at) : undefined;
    if (action) checkInputs(action, inputsRaw, joinPointer(at, 'inputs'), this.problems, raw.inputs !== undefined);
    const step: CompiledStep = {
      id,
      action: action ?? { key: String(raw.action), name: '', description: '', group: '', inputs: {} },
      connection,
      inputs,
      if: raw.if !== undefined ? this.template(raw.if, joinPointer(at, 'if')) : undefined,
      forEach: raw.forEach !== undefined ? this.template(raw.forEach, joinPointer(at, 'forEach')) : undefined,
      retry: isObj(raw.retry) ? retryPolicy(raw.retry) : undefined,
      timeoutMs: typeof raw.timeoutMs === 'number' ? raw.timeoutMs : undefined,
      onError: enumValue(raw, stepOptions, 'onError'),
      pointer: at,
    };
    return action ? step : undefined;
  }

  private action(key: unknown, pointer: string): ActionDeclaration | undefined {
    if (typeof key !== 'string') return undefined;
    const action = findAction(key);
    if (action) return action;
    if (!/^[a-z][A-Za-z0-9]*\.[A-Za-z][A-Za-z0-9]*$/.test(key)) return undefined; // the schema reported it
    const hint = closest(key, actionKeys());
    this.problems.add(
      pointer,
      `unknown action "${key}"${hint ? ` — did you mean "${hint}"?` : ''}; see docs/authoring.md and docs/connectors/hcm.md for the actions`,
    );
    return undefined;
  }

  /** The connection a step uses: the named one, or the only one of the type the action needs. */
  private stepConnection(name: unknown, action: ActionDeclaration, at: string): string | undefined {
    const needed = action.connectionType;
    const names = Object.keys(this.connections);
    if (typeof name === 'string') {
      const conn = this.connections[name];
      if (!conn) {
        const hint = closest(name, names);
        this.problems.add(
          joinPointer(at, 'connection'),
          `unknown connection "${name}"${hint ? ` — did you mean "${hint}"?` : ''}; ${names.length ? `defined: ${names.join(', ')}` : 'define it under `connections:`'}`,
        );
        return undefined;
      }
      if (!needed) {
        this.problems.add(joinPointer(at, 'connection'), `${action.key} takes no connection; remove \`connection: ${name}\``);
      } else if (conn.type !== needed) {
        this.problems.add(joinPointer(at, 'connection'), `${action.key} needs a connection of type ${needed}, but "${name}" is ${conn.type}`);
      }
      return name;
    }
    if (!needed) return undefined;
    const candidates = names.filter((n) => this.connections[n]!.type === needed);
    if (candidates.length === 1) return candidates[0];
    this.problems.add(
      joinPointer(at, 'action'),
      candidates.length === 0
        ? `${action.key} needs a connection of type ${needed}: add one under \`connections:\` and name it with \`connection:\` on this step`
        : `${action.key} needs a connection: several of type ${needed} exist (${candidates.join(', ')}); choose one with \`connection:\``,
    );
    return undefined;
  }

  /** `$steps.<id>` and `$errors.<id>` must name an earlier step of the same list. */
  checkReferences(step: CompiledStep, earlier: string[], list: unknown[] = []): void {
    let all: Set<string> | undefined; // only needed to word a problem
    for (const t of [step.inputs, step.if, step.forEach]) {
      for (const expr of expressionsIn(t)) {
        if (!expr.source.includes('$steps.') && !expr.source.includes('$errors.')) continue;
        for (const m of expr.source.matchAll(/\$(steps|errors)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
          const [, kind, ref] = m as unknown as [string, string, string];
          if (earlier.includes(ref)) continue;
          all ??= new Set(list.map((s) => (isObj(s) && typeof s.id === 'string' ? s.id : '')));
          const why = ref === step.id ? 'a step cannot read its own results' : all.has(ref) ? `"${ref}" runs later` : `no step "${ref}" exists`;
          const hint = all.has(ref) ? '' : closest(ref, earlier);
          this.problems.add(
            expr.pointer,
            `$${kind}.${ref} does not name an earlier step (${why})${hint ? ` — did you mean "${hint}"?` : ''}; earlier steps: ${earlier.join(', ') || 'none'}`,
          );
        }
      }
    }
  }

  /** The trigger's own compile step (src/triggers/<type>/spec.ts); the schema reported an unknown type. */
  private trigger(raw: Obj): CompiledTrigger {
    return (findTriggerSpec(raw.type) ?? webhookSpec).compile(raw, this);
  }

  problem(pointer: string, message: string, part: 'key' | 'value' = 'value'): void {
    this.problems.add(pointer, message, undefined, part);
  }
}

/** A step's retry policy: what it says, the rest from the spec's defaults (file-spec.ts). */
export function retryPolicy(raw: Obj): RetryPolicy {
  return {
    maxAttempts: numberValue(raw, retryOptions, 'maxAttempts'),
    delayMs: numberValue(raw, retryOptions, 'delayMs'),
    backoff: enumValue(raw, retryOptions, 'backoff'),
    maxDelayMs: numberValue(raw, retryOptions, 'maxDelayMs'),
  };
}
