/** An unexpected failure's 500: what it says depends on who may read it (src/server/surfaces.ts). */
import { describe, expect, it } from 'vitest';
import { internalErrorAnswer } from '../../src/server/app.js';

const err = new TypeError("Cannot read properties of undefined (reading 'id') in /srv/hcm-runner/dist/runtime/x.js");

describe('internalErrorAnswer', () => {
  it('on the public edge: "internal error" and a reference, never the message', () => {
    const a = internalErrorAnswer(err, false);
    expect(a.body).toEqual({ error: 'internal error', ref: a.ref });
    expect(JSON.stringify(a.body)).not.toContain('/srv');
  });
  it("to operators: the message too, and the same reference as the log line's", () => {
    const a = internalErrorAnswer(err, true);
    expect(a.body.error).toBe(`internal error: ${err.message}`);
    expect(a.body.ref).toBe(a.ref);
    expect(internalErrorAnswer(err, true).ref).not.toBe(a.ref);
  });
});
