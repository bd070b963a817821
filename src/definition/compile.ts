/**
 * Compiles a parsed integration file: schema validation, the checks a schema cannot express
 * (unique ids, known actions and connections, step references, cron, time zones, each step's
 * inputs against its action's own schema) and the compiled form the runtime uses.
 */
import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import { findAction, actionKeys } from '../connectors/catalog.js';
import type { ActionDeclaration } from '../connectors/types.js';
import { parseDuration } from '../common/duration.js';
import { checkInputs } from './input-checks.js';
import { ProblemSink } from './problems.js';
import { validateAgainstSchema } from './schema-validator.js';
import { closest } from './suggest.js';
import { compileTemplate, expressionsIn } from './templates.js';
import type {
  CompiledIntegration,
  CompiledStep,
  CompiledTrigger,
  ConnectionDefinition,
  Problem,
  RetryPolicy,
  ScheduleTiming,
  ValueTemplate,
  WebhookOptions,
  WebhookResponse,
} from './types.js';
import { joinPointer, type YamlSource } from './yaml-source.js';
import { fileLimits, type FileLimits } from './limits.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export const DEFAULT_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'];
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;
const DEFAULT_SYNC_TIMEOUT_MS = 30_000;

export interface CompileResult {
  integration?: CompiledIntegration;
  problems: Problem[];
}

export function compileIntegration(src: YamlSource, limits: FileLimits = fileLimits()): CompileResult {
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
    problems.add(joinPointer(pointer, max), `${pointer.slice(1).replace('/', '.')} has ${list.length} steps; at most ${max} are allowed (HCM_RUNNER_MAX_STEPS) — split the work into several integrations`);
  }
  return found;
}

class Compiler {
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
    return {
      name: String(doc.name ?? ''),
      description: typeof doc.description === 'string' ? doc.description : undefined,
      enabled: doc.enabled !== false,
      file: this.src.file,
      hash: createHash('sha256').update(this.src.text).digest('hex'),
      config,
      connections: this.connections,
      trigger,
      steps,
    };
  }

  private template(value: unknown, pointer: string): ValueTemplate {
    return compileTemplate(value, pointer, this.src, this.problems);
  }

  private stepList(list: unknown, pointer: string, what: string): CompiledStep[] {
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
      this.checkReferences(step, [...seen.keys()].filter((k) => k !== id), list, pointer);
      if (step) steps.push(step);
    });
    return steps;
  }

  private step(raw: Obj, at: string, id: string): CompiledStep | undefined {
    const action = this.action(raw.action, joinPointer(at, 'action'));
    const inputsRaw = isObj(raw.inputs) ? raw.inputs : {};
    const inputs = this.template(inputsRaw, joinPointer(at, 'inputs'));
    const connection = action ? this.stepConnection(raw.connection, action, at) : undefined;
    if (action) checkInputs(action, inputsRaw, joinPointer(at, 'inputs'), this.src, this.problems, raw.inputs !== undefined);
    const step: CompiledStep = {
      id,
      action: action ?? { key: String(raw.action), name: '', description: '', group: '', inputs: {} },
      connection,
      inputs,
      if: raw.if !== undefined ? this.template(raw.if, joinPointer(at, 'if')) : undefined,
      forEach: raw.forEach !== undefined ? this.template(raw.forEach, joinPointer(at, 'forEach')) : undefined,
      retry: isObj(raw.retry) ? retryPolicy(raw.retry) : undefined,
      timeoutMs: typeof raw.timeoutMs === 'number' ? raw.timeoutMs : undefined,
      onError: raw.onError === 'continue' ? 'continue' : 'fail',
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
  private checkReferences(step: CompiledStep | undefined, earlier: string[], list: unknown[], listPointer: string): void {
    if (!step) return;
    const all = new Set(list.map((s) => (isObj(s) && typeof s.id === 'string' ? s.id : '')));
    for (const t of [step.inputs, step.if, step.forEach]) {
      for (const expr of expressionsIn(t)) {
        for (const m of expr.source.matchAll(/\$(steps|errors)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
          const [, kind, ref] = m as unknown as [string, string, string];
          if (earlier.includes(ref)) continue;
          const why = ref === step.id ? 'a step cannot read its own results' : all.has(ref) ? `"${ref}" runs later` : `no step "${ref}" exists`;
          const hint = all.has(ref) ? '' : closest(ref, earlier);
          this.problems.add(
            expr.pointer,
            `$${kind}.${ref} does not name an earlier step (${why})${hint ? ` — did you mean "${hint}"?` : ''}; earlier steps: ${earlier.join(', ') || 'none'}`,
          );
        }
      }
    }
    void listPointer;
  }

  private trigger(raw: Obj): CompiledTrigger {
    switch (raw.type) {
      case 'schedule':
        return {
          type: 'schedule',
          ...this.timing(raw),
          overlap: raw.overlap === 'queue' || raw.overlap === 'allow' ? raw.overlap : 'skip',
          catchUp: raw.catchUp === 'latest' ? 'latest' : 'none',
        };
      case 'poll': {
        const step = this.step({ id: 'poll', action: raw.action, connection: raw.connection, inputs: raw.inputs }, '/trigger', 'poll');
        if (step) this.checkReferences(step, [], [], '/trigger');
        return {
          type: 'poll',
          ...this.timing(raw),
          step: step ?? ({ id: 'poll' } as CompiledStep),
          items: this.template(raw.items ?? '{% data %}', '/trigger/items'),
          key: this.template(raw.key, '/trigger/key'),
          mode: raw.mode === 'each' ? 'each' : 'batch',
          maxSeen: typeof raw.maxSeen === 'number' ? raw.maxSeen : 10_000,
        };
      }
      case 'appEvent':
        return {
          type: 'appEvent',
          ...this.webhook(raw),
          subscribe: this.stepList(raw.subscribe, '/trigger/subscribe', 'trigger.subscribe'),
          unsubscribe: this.stepList(raw.unsubscribe, '/trigger/unsubscribe', 'trigger.unsubscribe'),
        };
      default:
        return { type: 'webhook', ...this.webhook(raw) };
    }
  }

  private webhook(raw: Obj): WebhookOptions {
    const hmac = isObj(raw.hmac) ? raw.hmac : undefined;
    return {
      methods: Array.isArray(raw.methods) ? raw.methods.map(String) : DEFAULT_METHODS,
      maxBodyBytes: typeof raw.maxBodyBytes === 'number' ? raw.maxBodyBytes : DEFAULT_MAX_BODY_BYTES,
      hmac: hmac
        ? {
            secret: this.template(hmac.secret, '/trigger/hmac/secret'),
            header: String(hmac.header ?? 'x-hmac-hash').toLowerCase(),
            algorithm: (hmac.algorithm as 'sha256') ?? 'sha256',
            encoding: hmac.encoding === 'base64' ? 'base64' : 'hex',
            prefix: typeof hmac.prefix === 'string' ? hmac.prefix : '',
          }
        : undefined,
      response: this.response(raw.response),
    };
  }

  private response(raw: unknown): WebhookResponse {
    if (typeof raw === 'string') return { mode: 'async', computed: this.template(raw, '/trigger/response') };
    if (!isObj(raw)) return { mode: 'async' };
    if (raw.mode === 'sync') {
      for (const k of ['statusCode', 'contentType', 'headers', 'body']) {
        if (raw[k] !== undefined) {
          this.problems.add(`/trigger/response/${k}`, `response.${k} applies to async mode only; in sync mode a core.respond step sets the response`, undefined, 'key');
        }
      }
      return { mode: 'sync', timeoutMs: typeof raw.timeoutMs === 'number' ? raw.timeoutMs : DEFAULT_SYNC_TIMEOUT_MS };
    }
    if (raw.timeoutMs !== undefined) this.problems.add('/trigger/response/timeoutMs', 'response.timeoutMs applies to sync mode only', undefined, 'key');
    const field = (k: string) => (raw[k] !== undefined ? this.template(raw[k], `/trigger/response/${k}`) : undefined);
    const custom = { statusCode: field('statusCode'), contentType: field('contentType'), headers: field('headers'), body: field('body') };
    const any = Object.values(custom).some((v) => v !== undefined);
    return any ? { mode: 'async', custom } : { mode: 'async' };
  }

  private timing(raw: Obj): ScheduleTiming {
    const forms = (['every', 'cron', 'at'] as const).filter((k) => raw[k] !== undefined);
    if (forms.length === 0) {
      this.problems.add('/trigger', `a ${String(raw.type)} trigger needs one of every (e.g. 15m), cron (e.g. "*/5 * * * *") or at (e.g. "08:30")`);
    } else if (forms.length > 1) {
      this.problems.add(`/trigger/${forms[1]}`, `use only one of every, cron and at (found ${forms.join(' and ')})`, undefined, 'key');
    }
    const timezone = typeof raw.timezone === 'string' ? raw.timezone : 'UTC';
    if (!isValidTimeZone(timezone)) {
      const hint = closest(timezone, Intl.supportedValuesOf('timeZone'));
      this.problems.add('/trigger/timezone', `unknown time zone "${timezone}"${hint ? ` — did you mean "${hint}"?` : ''}; use an IANA name such as Europe/Berlin or UTC`);
    }
    const timing: ScheduleTiming = { timezone };
    if (typeof raw.every === 'string') {
      const ms = parseDuration(raw.every);
      // A malformed duration was reported by the schema; here only "0s" and the like remain.
      if (ms === undefined && /^\d+(ms|s|m|h|d)$/.test(raw.every)) this.problems.add('/trigger/every', `"${raw.every}" is not a duration; write e.g. 30s, 15m, 2h or 1d (more than 0)`);
      else timing.every = ms;
    }
    if (typeof raw.at === 'string' && /^\d\d:\d\d$/.test(raw.at)) {
      const [h, m] = raw.at.split(':');
      timing.at = raw.at;
      timing.pattern = `0 ${Number(m)} ${Number(h)} * * *`;
    }
    if (typeof raw.cron === 'string') {
      timing.cron = raw.cron;
      const fields = raw.cron.trim().split(/\s+/).length;
      if (fields !== 5 && fields !== 6) {
        this.problems.add('/trigger/cron', `cron "${raw.cron}" has ${fields} fields; write 5 (minute hour day month weekday) or 6 (with seconds first)`);
      } else {
        try {
          new Cron(raw.cron, { paused: true, timezone: isValidTimeZone(timezone) ? timezone : 'UTC' }).stop();
          timing.pattern = raw.cron;
        } catch (err) {
          this.problems.add('/trigger/cron', `cron "${raw.cron}" does not parse: ${(err as Error).message}`);
        }
      }
    }
    return timing;
  }
}

export function retryPolicy(raw: Obj): RetryPolicy {
  return {
    maxAttempts: typeof raw.maxAttempts === 'number' ? raw.maxAttempts : 3,
    delayMs: typeof raw.delayMs === 'number' ? raw.delayMs : 1_000,
    backoff: raw.backoff === 'exponential' ? 'exponential' : 'fixed',
    maxDelayMs: typeof raw.maxDelayMs === 'number' ? raw.maxDelayMs : 60_000,
  };
}

const timeZoneValidity = new Map<string, boolean>();

/** Whether `tz` is an IANA zone Intl knows; cached because building a formatter is costly. */
export function isValidTimeZone(tz: string): boolean {
  let valid = timeZoneValidity.get(tz);
  if (valid === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      valid = true;
    } catch {
      valid = false;
    }
    timeZoneValidity.set(tz, valid);
  }
  return valid;
}
