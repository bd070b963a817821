/**
 * Generates the integration schema's validator as code (ajv "standalone"), so loading a file never
 * compiles the schema: `npm run docs` writes src/definition/generated/integration-validator.ts from
 * the same schema it writes to schemas/integration.schema.json (one source, a test fails when the
 * module is stale). It is a .ts file so that `tsc` carries it into dist/ like any other module.
 */
import { fileURLToPath } from 'node:url';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { ActionDeclaration } from '../connectors/types.js';
import { inputSchema, inputSchemaKey } from './action-schema.js';
import type { JsonSchema } from './spec.js';
import { createAjv } from './schema-validator.js';

type StandaloneCode = (ajv: Ajv2020, refsOrFunc?: ValidateFunction | Record<string, string>) => string;
const standaloneCode = ((standaloneCodeModule as unknown as { default?: StandaloneCode }).default ??
  standaloneCodeModule) as unknown as StandaloneCode;

// Paths from the repository root: `npm run docs` runs this from dist/, the files live in src/.
export const validatorModulePath = fileURLToPath(new URL('../../src/definition/generated/integration-validator.ts', import.meta.url));
export const inputValidatorsModulePath = fileURLToPath(new URL('../../src/definition/generated/input-validators.ts', import.meta.url));

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
  return moduleText('schemas/integration.schema.json', standaloneCode(ajv, ajv.compile(validationSchema(schema))));
}

/**
 * One validator per distinct input schema of the declared actions (action-schema.ts), exported as
 * `inputValidators`, keyed by the schema's JSON: input-checks.ts finds a declaration's validator
 * by its schema, so a stale module can only miss (and compile at run time), never check wrongly.
 */
export function renderInputValidatorsModule(actions: readonly ActionDeclaration[]): string {
  const ajv = createAjv({ code: { source: true, esm: true } });
  const ids = new Map<string, string>();
  for (const action of actions) {
    for (const decl of Object.values(action.inputs)) {
      const key = inputSchemaKey(inputSchema(decl));
      if (ids.has(key)) continue;
      const id = `input${ids.size}`;
      ids.set(key, id);
      ajv.addSchema(JSON.parse(key) as JsonSchema, id);
    }
  }
  const code = standaloneCode(ajv, Object.fromEntries([...ids.values()].map((id) => [id, id])));
  const table = [...ids].map(([key, id]) => `  ${JSON.stringify(key)}: ${id},`);
  return moduleText('the action declarations', `${code}\nexport const inputValidators = {\n${table.join('\n')}\n};`);
}

function moduleText(source: string, code: string): string {
  // ajv's ESM output still loads its runtime helpers (deep equality, string length in code
  // points) with `require`; give the module one.
  return [
    '// @ts-nocheck',
    `/* Generated from ${source} by \`npm run docs\` (src/definition/validator-code.ts); do not edit by hand. */`,
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code,
    '',
  ].join('\n');
}
