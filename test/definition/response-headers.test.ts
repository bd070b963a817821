/**
 * Response headers no HTTP message can carry (a name with a space, a value `ż`, a line break) are
 * refused by validation at their own line and column: in core.respond inputs and in a webhook's
 * custom response. Computed ones are checked when they have a value (test/server/edge-responses.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import type { Problem } from '../../src/definition/types.js';

function problems(yaml: string): Problem[] {
  return loadText('x.yaml', yaml).problems;
}

const sync = 'name: t\ntrigger: { type: webhook, response: { mode: sync } }\nsteps:\n';

describe('core.respond headers', () => {
  it('a header name with a space: at the name, saying what names may hold', () => {
    const p = problems(`${sync}  - id: r\n    action: core.respond\n    inputs:\n      headers:\n        x ok: "1"\n`);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ line: 8, column: 9, path: '/steps/0/inputs/headers/x ok' });
    expect(p[0]!.message).toContain('input "headers" of core.respond: header name "x ok" is not a valid header name: a space at character 2');
  });

  it('a value with a non-ASCII character: at the value, even when another value is an expression', () => {
    const yaml = `${sync}  - id: r\n    action: core.respond\n    inputs:\n      headers:\n        x-city: "Łódź"\n        x-dyn: "{% $trigger.method %}"\n`;
    const p = problems(yaml);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ line: 8, column: 17, path: '/steps/0/inputs/headers/x-city' });
    expect(p[0]!.message).toMatch(/the value of header "x-city" is not a valid header value: "Ł" \(U\+0141\) at character 1 .*ASCII/);
  });

  it('a content type with a line break', () => {
    const p = problems(`${sync}  - id: r\n    action: core.respond\n    inputs:\n      contentType: "text/html\\r\\nx-injected: 1"\n`);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ line: 7, column: 20, path: '/steps/0/inputs/contentType' });
    expect(p[0]!.message).toContain('U+000D at character 10');
  });

  it('a status code outside 200–599 stays refused', () => {
    const p = problems(`${sync}  - id: r\n    action: core.respond\n    inputs: { statusCode: 101 }\n`);
    expect(p).toHaveLength(1);
    expect(p[0]!.path).toBe('/steps/0/inputs/statusCode');
  });

  it('framing headers are valid syntax (dropped when sent, not refused)', () => {
    expect(problems(`${sync}  - id: r\n    action: core.respond\n    inputs: { headers: { content-length: "1", x-fine: "ok" } }\n`)).toEqual([]);
  });
});

describe('webhook custom response headers', () => {
  const steps = 'steps: [{ id: a, action: core.transform, inputs: { value: 1 } }]\n';

  it('a bad literal name and value are both reported at their place; expressions wait for their value', () => {
    const yaml = `name: t\ntrigger:\n  type: webhook\n  response:\n    headers:\n      "bad name": x\n      x-ok: "{% $trigger.method %}"\n      x-val: "żółw"\n${steps}`;
    const p = problems(yaml);
    expect(p.map((x) => [x.line, x.column, x.path])).toEqual([
      [6, 7, '/trigger/response/headers/bad name'],
      [8, 14, '/trigger/response/headers/x-val'],
    ]);
    expect(p[0]!.message).toContain('header name "bad name" is not a valid header name: a space at character 4');
    expect(p[1]!.message).toContain('"ż" (U+017C) at character 1');
  });

  it('a literal contentType that cannot be sent', () => {
    const p = problems(`name: t\ntrigger:\n  type: webhook\n  response:\n    contentType: "text/plain\\n"\n${steps}`);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ line: 5, column: 18, path: '/trigger/response/contentType' });
  });
});
