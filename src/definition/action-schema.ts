/**
 * Derives the JSON Schema of an action's inputs from its declaration. The validator (load time,
 * literal values) and the engine (run time, evaluated values) both check against it.
 */
import type { InputDecl, JsonSchema } from '../connectors/types.js';

const binarySchema: JsonSchema = {
  anyOf: [
    { type: 'string' },
    {
      type: 'object',
      required: ['contentType', 'base64'],
      properties: { contentType: { type: 'string' }, size: { type: 'integer' }, base64: { type: 'string' }, filename: { type: 'string' } },
    },
  ],
};

const keyValueSchema: JsonSchema = {
  anyOf: [
    { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'array'] } },
    {
      type: 'array',
      items: { type: 'object', required: ['key'], properties: { key: { type: 'string' }, value: {} } },
    },
  ],
};

/**
 * The key of an input schema in the generated validator table (validator-code.ts writes it,
 * input-checks.ts looks validators up by it): the schema's JSON.
 */
export function inputSchemaKey(schema: JsonSchema): string {
  return JSON.stringify(schema);
}

export function inputSchema(decl: InputDecl): JsonSchema {
  let base: JsonSchema;
  switch (decl.type) {
    case 'date':
      base = { type: 'string' };
      break;
    case 'binary':
      base = { ...binarySchema };
      break;
    case 'keyValue':
      base = { ...keyValueSchema };
      break;
    case 'any':
      base = {};
      break;
    default:
      base = { type: decl.type };
  }
  if (decl.enum) base.enum = [...decl.enum];
  if (decl.minimum !== undefined) base.minimum = decl.minimum;
  if (decl.maximum !== undefined) base.maximum = decl.maximum;
  if (decl.default !== undefined) base.default = decl.default;
  if (decl.description) base.description = decl.description;
  return { ...base, ...decl.schema };
}

/** A short human description of what an input accepts, for error messages and docs. */
export function describeInput(decl: InputDecl): string {
  const parts: string[] = [];
  if (decl.enum) parts.push(`one of ${decl.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  else if (decl.type === 'keyValue') parts.push('a map or a list of {key, value}');
  else if (decl.type === 'binary') parts.push('a binary value {contentType, size, base64} or a string');
  else if (decl.type === 'date') parts.push('an ISO-8601 date');
  else if (decl.type === 'any') parts.push('any value');
  else parts.push(`${/^[aeiou]/.test(decl.type) ? 'an' : 'a'} ${decl.type}`);
  if (typeof decl.schema?.pattern === 'string') parts.push(`matching ${decl.schema.pattern}`);
  if (decl.minimum !== undefined && decl.maximum !== undefined) parts.push(`from ${decl.minimum} to ${decl.maximum}`);
  else if (decl.minimum !== undefined) parts.push(`≥ ${decl.minimum}`);
  else if (decl.maximum !== undefined) parts.push(`≤ ${decl.maximum}`);
  return parts.join(' ');
}
