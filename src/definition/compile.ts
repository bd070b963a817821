/**
 * Compiles a parsed integration file: schema validation, the checks a schema cannot express
 * (unique ids, known actions and connections, step references, cron, time zones, each step's
 * inputs against its action's own schema) and the compiled form the runtime uses.
 */
import { checkWaitStep } from './wait-checks.js';
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
import type {
  CallSite,
  CompiledCase,
  CompiledIntegration,
  CompiledStep,
  CompiledSwitch,
  CompiledTrigger,
  ConnectionDefinition,
  Problem,
  RetryPolicy,
  ValueTemplate,
} from './types.js';
import { GROUP_ACTION, indexSteps, rawTopLists, stepPastLimit, SWITCH_ACTION, type IndexedStep } from './control-flow.js';
import { describeLocation } from './schema-validator.js';
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

/** Reports each top-level step list with more than `max` steps, nested ones counted, at its first step past the limit. */
function tooManySteps(doc: Obj, max: number, problems: ProblemSink): boolean {
  let found = false;
  for (const { list, pointer, what } of rawTopLists(doc)) {
    const past = stepPastLimit(list, pointer, max);
    if (!past) continue;
    found = true;
    problems.add(
      past.pointer,
      `${what} has ${past.counted} steps; at most ${max} are allowed (HCM_RUNNER_MAX_STEPS) — steps inside groups and switches count; split the work into several integrations (core.call runs another integration as a sub-flow)`,
    );
  }
  return found;
}

class Compiler implements TriggerCompileContext {
  private readonly connections: Record<string, ConnectionDefinition> = {};
  /** Every step id of the file with where it is (ids are unique in the whole file). */
  private readonly index: Map<string, IndexedStep>;
  /** The top-level list being compiled (`steps`, `onFailure` …), for wording reference problems. */
  private list = 'steps';
  /** The ids of the groups and switches around the step being compiled, outermost first. */
  private readonly enclosing: string[] = [];
  /** core.call steps naming their integration literally. */
  private readonly calls: CallSite[] = [];

  constructor(
    private readonly src: YamlSource,
    private readonly problems: ProblemSink,
    private readonly doc: Obj,
  ) {
    const { byId, duplicates } = indexSteps(doc);
    this.index = byId;
    for (const { step, first } of duplicates)
      this.problems.add(
        joinPointer(step.pointer, 'id'),
        `step id "${step.id}" is taken by ${describeLocation(first.pointer)}; step ids must be unique in the whole file (nested steps, onFailure and trigger steps included) — rename one of them`,
      );
  }

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
    // onFailure reads the top-level steps that ran before the failure (absent ones read as nothing).
    const onFailure = doc.onFailure !== undefined ? this.stepList(doc.onFailure, '/onFailure', 'onFailure', topIds(doc.steps)) : undefined;
    const correlationKey = doc.correlationKey !== undefined ? this.correlationKey(doc.correlationKey) : undefined;
    const concurrency = isObj(doc.concurrency) ? this.concurrency(doc.concurrency) : undefined;
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
    if (onFailure) integration.onFailure = onFailure;
    if (this.calls.length) integration.calls = this.calls;
    if (correlationKey) integration.correlationKey = correlationKey;
    if (concurrency) integration.concurrency = concurrency;
    return integration;
  }

  /** `correlationKey:` is evaluated before any step runs: `$steps`, `$errors` and `$state` have nothing yet. */
  private correlationKey(raw: unknown): ValueTemplate {
    const t = this.template(raw, '/correlationKey');
    for (const expr of expressionsIn(t)) {
      const m = /\$(steps|errors|state)\b/.exec(expr.source);
      if (m)
        this.problems.add(
          expr.pointer,
          `correlationKey is evaluated when the execution is created, before any step runs: $${m[1]} is empty then; use $trigger (e.g. {% $trigger.body.data.workerId %})`,
        );
    }
    return t;
  }

  /** `concurrency:`: its key is evaluated when the execution is created, like correlationKey. */
  private concurrency(raw: Record<string, unknown>): NonNullable<CompiledIntegration['concurrency']> {
    const limit = typeof raw.limit === 'number' ? raw.limit : 1;
    if (raw.key === undefined) return { limit };
    const key = this.template(raw.key, '/concurrency/key');
    for (const expr of expressionsIn(key)) {
      const m = /\$(steps|errors|state)\b/.exec(expr.source);
      if (m)
        this.problems.add(
          expr.pointer,
          `concurrency.key is evaluated when the execution is created, before any step runs: $${m[1]} is empty then; use $trigger (e.g. {% $trigger.body.data.workerId %})`,
        );
    }
    return { key, limit };
  }

  template(value: unknown, pointer: string): ValueTemplate {
    return compileTemplate(value, pointer, this.src, this.problems);
  }

  /**
   * Compiles a list of steps. `outer` are the ids its steps may read besides the list's own
   * earlier steps: the steps before the list in every enclosing block.
   */
  stepList(list: unknown, pointer: string, what: string, outer: readonly string[] = []): CompiledStep[] {
    if (!Array.isArray(list)) return [];
    // Nested lists are compiled with their top-level list's name as `what`.
    const previous = this.list;
    this.list = what;
    const visible = [...outer];
    const steps: CompiledStep[] = [];
    list.forEach((raw, i) => {
      const at = joinPointer(pointer, i);
      if (!isObj(raw)) return;
      const id = typeof raw.id === 'string' ? raw.id : `#${i}`;
      const step = this.step(raw, at, id, visible);
      if (step) {
        this.checkReferences(step, visible);
        steps.push(step);
      }
      visible.push(id);
    });
    this.list = previous;
    return steps;
  }

  step(raw: Obj, at: string, id: string, visible: readonly string[] = []): CompiledStep | undefined {
    const kinds = (['action', 'steps', 'switch'] as const).filter((k) => raw[k] !== undefined);
    if (kinds.length > 1) {
      this.problems.add(
        joinPointer(at, kinds[1]!),
        `step "${id}" has both \`${kinds[0]}\` and \`${kinds[1]}\`: a step has one of \`action\`, \`steps\` (a group) or \`switch\` — move the action into the group as a step of its own, or split the step in two`,
        undefined,
        'key',
      );
      return undefined;
    }
    if (kinds.length === 0) {
      this.problems.add(
        at,
        `${describeLocation(at)} is missing required key "action" (or \`steps\` for a group of steps, \`switch\` to choose between blocks)`,
      );
      return undefined;
    }
    if (raw.concurrency !== undefined && raw.forEach === undefined)
      this.problems.add(
        joinPointer(at, 'concurrency'),
        `concurrency needs forEach: it says how many items run at once — add \`forEach:\` to step "${id}" or remove \`concurrency\``,
        undefined,
        'key',
      );
    if (kinds[0] !== 'action') return this.blockStep(raw, at, id, kinds[0]!, visible);
    const action = this.action(raw.action, joinPointer(at, 'action'));
    const inputsRaw = isObj(raw.inputs) ? raw.inputs : {};
    const inputs = this.template(inputsRaw, joinPointer(at, 'inputs'));
    const connection = action ? this.stepConnection(raw.connection, action, at) : undefined;
    if (action) checkInputs(action, inputsRaw, joinPointer(at, 'inputs'), this.problems, raw.inputs !== undefined);
    if (action?.key === 'core.wait') checkWaitStep(raw, inputsRaw, at, id, this.problems);
    if (action?.key === 'core.call' && typeof inputsRaw.integration === 'string' && !inputsRaw.integration.includes('{%')) {
      const pointer = joinPointer(at, 'inputs', 'integration');
      this.calls.push({ integration: inputsRaw.integration, step: id, pointer, position: this.src.positionOf(pointer) });
    }
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
    if (typeof raw.concurrency === 'number' && raw.concurrency > 1) step.concurrency = raw.concurrency;
    return action ? step : undefined;
  }

  /** A group (`steps`) or a switch: `if`, `forEach`, `concurrency` and `onError` as for actions; no action keys. */
  private blockStep(raw: Obj, at: string, id: string, kind: 'steps' | 'switch', visible: readonly string[]): CompiledStep | undefined {
    const what = kind === 'steps' ? 'a group' : 'a switch';
    for (const key of ['retry', 'timeoutMs', 'inputs', 'connection'] as const) {
      if (raw[key] === undefined) continue;
      const fix =
        key === 'retry' || key === 'timeoutMs'
          ? `put \`${key}\` on the action steps inside it`
          : `\`${key}\` belongs to an action step; remove it here`;
      this.problems.add(joinPointer(at, key), `${key} is for action steps only and step "${id}" is ${what}: ${fix}`, undefined, 'key');
    }
    if (kind === 'switch' && raw.forEach !== undefined)
      this.problems.add(
        joinPointer(at, 'forEach'),
        `forEach on a switch is not supported: put the switch in a forEach group (\`forEach\` + \`steps: [ {id: …, switch: …} ]\`)`,
        undefined,
        'key',
      );
    const step: CompiledStep = {
      id,
      action: kind === 'steps' ? GROUP_ACTION : SWITCH_ACTION,
      inputs: { kind: 'literal', value: {} },
      if: raw.if !== undefined ? this.template(raw.if, joinPointer(at, 'if')) : undefined,
      forEach: raw.forEach !== undefined && kind === 'steps' ? this.template(raw.forEach, joinPointer(at, 'forEach')) : undefined,
      onError: enumValue(raw, stepOptions, 'onError'),
      pointer: at,
    };
    if (typeof raw.concurrency === 'number' && raw.concurrency > 1) step.concurrency = raw.concurrency;
    // The group's own id is not visible inside it: it has not finished.
    this.enclosing.push(id);
    if (kind === 'steps') step.steps = this.stepList(raw.steps, joinPointer(at, 'steps'), this.list, visible);
    else step.switch = this.switchBlock(raw.switch, joinPointer(at, 'switch'), id, visible);
    this.enclosing.pop();
    return step;
  }

  private switchBlock(raw: unknown, at: string, id: string, visible: readonly string[]): CompiledSwitch {
    const sw = isObj(raw) ? raw : {};
    const cases: CompiledCase[] = [];
    if (Array.isArray(sw.cases) && sw.cases.length === 0)
      this.problems.add(
        joinPointer(at, 'cases'),
        `switch "${id}" has no cases: add at least one \`{name, when, steps}\` (or replace the switch by a group with \`if\`)`,
      );
    const names = new Set<string>();
    (Array.isArray(sw.cases) ? sw.cases : []).forEach((c, i) => {
      if (!isObj(c)) return;
      const cat = joinPointer(at, 'cases', i);
      const name = typeof c.name === 'string' ? c.name : `#${i}`;
      if (name === 'default' || names.has(name))
        this.problems.add(
          joinPointer(cat, 'name'),
          name === 'default'
            ? 'a case may not be named "default": the record calls the `default:` block so — rename the case'
            : `case name "${name}" is already used in switch "${id}"; case names must be unique within a switch`,
        );
      names.add(name);
      const when = this.template(c.when ?? false, joinPointer(cat, 'when'));
      this.checkTemplateReferences([when], id, visible);
      cases.push({ name, when, steps: this.stepList(c.steps, joinPointer(cat, 'steps'), this.list, visible) });
    });
    const out: CompiledSwitch = { cases };
    if (sw.default !== undefined) out.default = this.stepList(sw.default, joinPointer(at, 'default'), this.list, visible);
    return out;
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

  /**
   * `$steps.<id>` and `$errors.<id>` must name a step this one can read: an earlier step of its
   * block or one before the block in an enclosing block. Anything else says how to reach it.
   */
  checkReferences(step: CompiledStep, earlier: readonly string[]): void {
    this.checkTemplateReferences([step.inputs, step.if, step.forEach], step.id, earlier);
  }

  private checkTemplateReferences(templates: Array<ValueTemplate | undefined>, self: string, earlier: readonly string[]): void {
    for (const t of templates) {
      for (const expr of expressionsIn(t)) {
        if (!expr.source.includes('$steps.') && !expr.source.includes('$errors.')) continue;
        for (const m of expr.source.matchAll(/\$(steps|errors)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
          const [, kind, ref] = m as unknown as [string, string, string];
          if (earlier.includes(ref)) continue;
          this.problems.add(expr.pointer, this.unreachable(kind!, ref, self, earlier));
        }
      }
    }
  }

  /** Why `$<kind>.<ref>` cannot be read from here, and how to reach it when it can be. */
  private unreachable(kind: string, ref: string, self: string, earlier: readonly string[]): string {
    const seen = `earlier steps: ${earlier.join(', ') || 'none'}`;
    const target = this.index.get(ref);
    if (ref === self) return `$${kind}.${ref} does not name an earlier step (a step cannot read its own results); ${seen}`;
    if (!target) {
      const hint = closest(ref, [...earlier]);
      return `$${kind}.${ref} does not name an earlier step (no step "${ref}" exists)${hint ? ` — did you mean "${hint}"?` : ''}; ${seen}`;
    }
    if (target.list !== this.list)
      return `$${kind}.${ref} does not name an earlier step ("${ref}" is a step of ${target.list}, which runs apart from ${this.list}); ${seen}`;
    // The outermost block around the target that is readable from here, then the path down to it.
    const reachable = target.blocks.findIndex((b) => earlier.includes(b.id));
    if (reachable < 0 || kind === 'errors') {
      // Blocks this step is in too are no obstacle: the first one it is not in is.
      let shared = 0;
      while (shared < target.blocks.length && target.blocks[shared]!.id === this.enclosing[shared]) shared++;
      const inside = target.blocks[shared];
      const why = inside ? `"${ref}" is inside ${inside.kind} "${inside.id}", which has not run before this step` : `"${ref}" runs later`;
      return `$${kind}.${ref} does not name an earlier step (${why}); ${seen}`;
    }
    let path = `$steps.${target.blocks[reachable]!.id}`;
    for (let j = reachable; j < target.blocks.length; j++) {
      const b = target.blocks[j]!;
      path += `${b.forEach ? '[0]' : ''}.${j + 1 < target.blocks.length ? target.blocks[j + 1]!.id : ref}`;
    }
    const inside = target.blocks.at(-1)!;
    const each = target.blocks.slice(reachable).some((b) => b.forEach) ? ' (a forEach group has one object per item: [0] is the first)' : '';
    return `$steps.${ref} is inside ${inside.kind} "${inside.id}" and cannot be read from here; read it through the block's results: ${path}${each}`;
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

/** The ids of a raw top-level list, for onFailure's scope. */
function topIds(list: unknown): string[] {
  return Array.isArray(list) ? list.flatMap((s) => (isObj(s) && typeof s.id === 'string' ? [s.id] : [])) : [];
}
