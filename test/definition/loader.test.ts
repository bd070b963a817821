/** The loader and compiler, in-process: positions, aliases, templates, semantic checks. */
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import type { Problem } from '../../src/definition/types.js';

function problems(yaml: string): Problem[] {
  return loadText('x.yaml', yaml).problems;
}

function only(yaml: string): Problem {
  const p = problems(yaml);
  expect(p, JSON.stringify(p, null, 2)).toHaveLength(1);
  return p[0]!;
}

const head = 'name: t\ntrigger: { type: webhook }\n';

describe('schema errors', () => {
  it('requires name, trigger and steps, at the document start', () => {
    const p = problems('description: nothing\n');
    expect(p.map((x) => x.message).sort()).toEqual([
      'the document is missing required key "name"',
      'the document is missing required key "steps"',
      'the document is missing required key "trigger"',
    ]);
    expect(p.every((x) => x.line === 1 && x.column === 1)).toBe(true);
  });

  it('reports a wrong trigger type once, with the allowed types', () => {
    const p = only('name: t\ntrigger:\n  type: cron\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n');
    expect(p).toMatchObject({ line: 3, column: 9, path: '/trigger/type' });
    expect(p.message).toContain('"webhook", "schedule", "poll", "appEvent"');
  });

  it('reports a key that belongs to another trigger type at the key', () => {
    const p = only('name: t\ntrigger:\n  type: webhook\n  every: 5m\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n');
    expect(p).toMatchObject({ line: 4, column: 3, path: '/trigger/every' });
    expect(p.message).toMatch(/unknown key "every" in trigger/);
  });

  it('suggests the closest key for a misspelt one', () => {
    const p = only(`${head}steps:\n  - id: a\n    action: core.log\n    inputs: { message: x }\n    onEror: continue\n`);
    expect(p.message).toContain('did you mean "onError"?');
    expect(p).toMatchObject({ line: 7, column: 5 });
  });

  it('reports a whole non-mapping file clearly', () => {
    expect(only('- just\n- a list\n').message).toMatch(/must be a YAML mapping/);
  });

  it('refuses an authorization parameter the runner sets itself, at the key, saying why', () => {
    const conn = (params: string) =>
      `${head}connections:\n  hcm:\n    type: hcm-oauth2\n    authorizeUrl: a\n    tokenUrl: b\n    apiUrl: c\n    clientId: d\n    clientSecret: e\n` +
      `    authorizeParams:\n${params}steps: [{ id: a, action: hcm.listWorkers, connection: hcm }]\n`;
    expect(problems(conn('      prompt: consent\n      max_age: { env: MAX_AGE }\n'))).toEqual([]);
    const p = only(conn('      prompt: consent\n      scope: openid\n'));
    expect(p).toMatchObject({ line: 13, column: 7, path: '/connections/hcm/authorizeParams/scope' });
    expect(p.message).toBe('connections.hcm.authorizeParams may not have the key "scope": the runner sets it itself (the scope comes from `scopes`)');
    expect(only(conn('      prompt: 1\n')).message).toBe(
      'connections.hcm.authorizeParams.prompt must be a string, {env: NAME, default: …} or {file: PATH, default: …}',
    );
  });

  it('reports a connection name that is not allowed once', () => {
    const p = only(
      `${head}connections:\n  "my hcm": { type: hcm-oauth2, authorizeUrl: a, tokenUrl: b, apiUrl: c, clientId: d, clientSecret: e }\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n`,
    );
    expect(p).toMatchObject({ line: 4, column: 3 });
    expect(p.message).toMatch(/^connections must match /);
  });

  it('reports duplicate keys', () => {
    const p = only('name: t\nname: u\ntrigger: { type: webhook }\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n');
    expect(p.message).toMatch(/duplicate key/);
    expect(p.line).toBe(2);
  });
});

describe('positions through aliases and merge keys', () => {
  it('points at the anchor where a merged value is written', () => {
    const yaml = `name: t\nx-log: &log\n  level: shout\ntrigger: { type: webhook }\nsteps:\n  - id: a\n    action: core.log\n    inputs:\n      <<: *log\n      message: hi\n`;
    expect(only(yaml)).toMatchObject({ line: 3, column: 10, path: '/steps/0/inputs/level' });
  });

  it('follows an alias used as a whole value', () => {
    const yaml = `name: t\nx-in: &in { statusCode: 99 }\ntrigger: { type: webhook }\nsteps:\n  - id: a\n    action: core.respond\n    inputs: *in\n`;
    expect(only(yaml)).toMatchObject({ line: 2, column: 25, path: '/steps/0/inputs/statusCode' });
  });
});

describe('expressions', () => {
  it('compiles expressions once at load and keeps literals literal', () => {
    const l = loadText(
      'x.yaml',
      `${head}steps:\n  - id: a\n    action: core.transform\n    inputs:\n      value: { a: "{% 1 + 1 %}", b: "not {% an %} expression", c: 3 }\n`,
    );
    expect(l.problems).toEqual([]);
    const inputs = l.integration!.steps[0]!.inputs;
    expect(inputs.kind).toBe('object');
    const value = inputs.kind === 'object' ? inputs.entries[0]![1] : undefined;
    expect(value?.kind).toBe('object');
    const kinds = value?.kind === 'object' ? value.entries.map(([k, v]) => `${k}:${v.kind}`) : [];
    expect(kinds).toEqual(['a:expr', 'b:literal', 'c:literal']);
  });

  it('reports a syntax error at the column inside a quoted expression', () => {
    const p = only(`${head}steps:\n  - id: a\n    action: core.transform\n    inputs:\n      value: "{% 1 + %}"\n`);
    expect(p.message).toMatch(/expression does not parse/);
    expect(p.line).toBe(7);
    expect(p.column).toBeGreaterThan(14);
  });

  it('checks $steps and $errors references against earlier steps', () => {
    const yaml = `${head}steps:\n  - id: a\n    action: core.transform\n    inputs: { value: "{% $errors.a %}" }\n  - id: b\n    action: core.transform\n    inputs: { value: "{% $steps.a & $steps.nope %}" }\n`;
    const p = problems(yaml);
    expect(p.map((x) => x.message)).toEqual([
      expect.stringContaining('$errors.a does not name an earlier step (a step cannot read its own results)'),
      expect.stringContaining('$steps.nope does not name an earlier step (no step "nope" exists)'),
    ]);
  });
});

describe('action inputs', () => {
  it('accepts expressions and env values where a type is expected, and checks literals', () => {
    const ok = loadText(
      'x.yaml',
      `${head}steps:\n  - id: a\n    action: core.respond\n    inputs: { statusCode: "{% 200 %}", body: { env: BODY, default: x } }\n`,
    );
    expect(ok.problems).toEqual([]);
    const bad = only(`${head}steps:\n  - id: a\n    action: core.respond\n    inputs: { statusCode: "200" }\n`);
    expect(bad.message).toMatch(/must be an integer from 200 to 599; got "200"/);
  });

  it('reads dates the same way at load time as at run time', () => {
    const conn = `connections:\n  hcm: { type: hcm-oauth2, authorizeUrl: a, tokenUrl: b, apiUrl: c, clientId: d, clientSecret: e }\n`;
    const step = (date: string) =>
      `name: t\n${conn}trigger: { type: webhook }\nsteps:\n  - id: a\n    action: hcm.initiateJobChange\n    inputs: { workerId: w, effectiveDate: ${date} }\n`;
    expect(problems(step('2024-06-01'))).toEqual([]);
    expect(problems(step('1717200000000'))).toEqual([]);
    expect(only(step('garbage')).message).toMatch(
      /input "effectiveDate" of hcm.initiateJobChange must be a date \(ISO-8601 or epoch milliseconds\); got "garbage"/,
    );
  });

  it('requires required inputs and names them', () => {
    expect(only(`${head}steps:\n  - id: a\n    action: core.fail\n`).message).toMatch(/core.fail needs input "message"/);
  });

  it('checks unknown connection types and the connection an action needs', () => {
    const p = only(`${head}steps:\n  - id: a\n    action: core.log\n    connection: hcm\n    inputs: { message: x }\n`);
    expect(p.message).toMatch(/unknown connection "hcm"/);
  });
});

describe('schedules', () => {
  const sched = (t: string) => `name: t\ntrigger:\n  type: schedule\n${t}steps: [{ id: a, action: core.log, inputs: { message: x } }]\n`;
  it('needs exactly one of every, cron and at', () => {
    expect(only(sched('')).message).toMatch(/needs one of every/);
    expect(only(sched('  every: 5m\n  at: "08:30"\n')).message).toMatch(/use only one of every, cron and at/);
  });
  it('accepts 5- and 6-field cron, at and every', () => {
    for (const t of ['  cron: "*/5 8-16 * * 1-5"\n', '  cron: "*/10 * * * * *"\n', '  at: "08:30"\n  timezone: Europe/Berlin\n', '  every: 90s\n']) {
      expect(problems(sched(t))).toEqual([]);
    }
  });
  it('rejects a cron with the wrong number of fields', () => {
    expect(only(sched('  cron: "* * *"\n')).message).toMatch(/has 3 fields/);
  });
  it('rejects a zero duration', () => {
    expect(only(sched('  every: 0s\n')).message).toMatch(/is not a duration/);
  });
});
