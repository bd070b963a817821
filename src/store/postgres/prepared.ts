/**
 * Named statements for the hot paths: PostgreSQL parses and plans a named statement once per
 * connection and then only binds and runs it, where an unnamed one is parsed and planned on every
 * call (the save and claim statements are CTEs over `unnest`: planning them costs more than
 * running them for a few rows). Only for statement texts that are constant per store (the table
 * name included); the name is derived from the text, so two texts never share a name.
 */
import { createHash } from 'node:crypto';
import type { QueryConfig } from 'pg';

const names = new Map<string, string>();

export function prepared(text: string, values: unknown[]): QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `hcm_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 1000) names.set(text, name);
  }
  return { name, text, values };
}
