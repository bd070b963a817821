/**
 * Generates the integration schema's validator as code (ajv "standalone"), so loading a file never
 * compiles the schema: `npm run docs` writes src/definition/generated/integration-validator.ts from
 * the same schema it writes to schemas/integration.schema.json (one source, a test fails when the
 * module is stale). It is a .ts file so that `tsc` carries it into dist/ like any other module.
 */
import { fileURLToPath } from 'node:url';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from './spec.js';
import { createAjv } from './schema-validator.js';

type StandaloneCode = (ajv: Ajv2020, refsOrFunc?: ValidateFunction) => string;
const standaloneCode = ((standaloneCodeModule as unknown as { default?: StandaloneCode }).default ?? standaloneCodeModule) as unknown as StandaloneCode;

export const validatorModulePath = fileURLToPath(new URL('./generated/integration-validator.ts', import.meta.url));

/**
 * What validation checks: the schema without the editor hints. The hints (schema-hints.ts) only
 * annotate — per-action `if`s that never fail — and would add a 62-way branch per step.
 */
export function validationSchema(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  if (copy.$defs?.step) delete copy.$defs.step.allOf;
  return copy;
}

export function renderValidatorModule(schema: JsonSchema): string {
  const ajv = createAjv({ code: { source: true, esm: true } });
  const code = standaloneCode(ajv, ajv.compile(validationSchema(schema)));
  // ajv's ESM output still loads its two runtime helpers (deep equality, string length in code
  // points) with `require`; give the module one.
  return [
    '// @ts-nocheck',
    '/* Generated from schemas/integration.schema.json by `npm run docs` (src/definition/validator-code.ts); do not edit by hand. */',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code,
    '',
  ].join('\n');
}
