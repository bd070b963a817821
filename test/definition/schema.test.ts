/** The integration schema is generated from the specs and declarations; the committed file is current. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allActions, findConnectionType } from '../../src/connectors/catalog.js';
import { hcmConnectionType } from '../../src/connectors/hcm/declarations/index.js';
import { renderSchemaWithHints } from '../../src/cli/docs.js';
import { integrationSchemaPath } from '../../src/definition/schema-validator.js';
import { connectionDefName } from '../../src/definition/integration-schema.js';

const schema = JSON.parse(readFileSync(integrationSchemaPath, 'utf8'));

describe('schemas/integration.schema.json', () => {
  it('is current: generated from the specs, with editor hints for every action (run `npm run docs` when this fails)', () => {
    expect(readFileSync(integrationSchemaPath, 'utf8')).toBe(renderSchemaWithHints());
    expect(schema.$defs.step.properties.action.examples).toEqual(allActions.map((a) => a.key));
    expect(schema.$defs.step.allOf).toHaveLength(allActions.length);
  });

  it('describes the hcm-oauth2 connection exactly as the connector declares it', () => {
    const conn = schema.$defs[connectionDefName(hcmConnectionType.type)];
    // The type's own keys and those every connection has (its limits), as the catalog lists them.
    const inputs = findConnectionType(hcmConnectionType.type)!.inputs;
    expect(inputs).toMatchObject(hcmConnectionType.inputs);
    expect(Object.keys(inputs)).toEqual(expect.arrayContaining(['rateLimit', 'maxConcurrent']));
    const declared = Object.keys(inputs);
    expect(
      Object.keys(conn.properties)
        .filter((k) => k !== 'type')
        .sort(),
    ).toEqual([...declared].sort());
    const required = Object.entries(inputs)
      .filter(([, d]) => d.required)
      .map(([k]) => k);
    expect(conn.required.filter((k: string) => k !== 'type').sort()).toEqual(required.sort());
  });

  it('is what the precompiled validator was generated from (run `npm run docs` when this fails)', async () => {
    const { renderValidatorModule, validatorModulePath } = await import('../../src/definition/validator-code.js');
    expect(
      readFileSync(validatorModulePath, 'utf8') === renderValidatorModule(schema),
      'src/definition/generated/integration-validator.ts is stale',
    ).toBe(true);
  });

  it('is a valid 2020-12 schema that ajv compiles in strict mode', async () => {
    const { createAjv } = await import('../../src/definition/schema-validator.js');
    expect(() => createAjv().compile(schema)).not.toThrow();
  });
});
