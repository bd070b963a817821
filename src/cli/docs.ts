/**
 * `hcm-runner docs`: regenerates everything derived from the specs and declarations
 * (`npm run docs`): schemas/integration.schema.json, docs/connectors/hcm.md, the generated
 * trigger reference in docs/triggers.md and the settings table in docs/server.md. Tests fail when
 * any of them is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeHcmDocs } from '../connectors/hcm/docs.js';
import { renderIntegrationSchema } from '../definition/integration-schema.js';
import { integrationSchemaPath } from '../definition/schema-validator.js';
import { allActions } from '../connectors/catalog.js';
import { inputValidatorsModulePath, renderInputValidatorsModule, renderValidatorModule, validatorModulePath } from '../definition/validator-code.js';
import { writeSettingsDocs } from '../settings/docs.js';
import { writeTriggerDocs } from '../triggers/docs.js';
import { parse } from './args.js';

const usage =
  'Usage: hcm-runner docs\n\nRegenerates schemas/integration.schema.json (and its precompiled validator), docs/connectors/hcm.md,\nthe trigger reference in docs/triggers.md and the settings table in docs/server.md from the specs\n(src/definition/file-spec.ts, src/triggers/*/spec.ts, src/settings/spec.ts) and the action declarations.';

/** The schema as `npm run docs` writes it (kept under this name for the staleness test). */
export const renderSchemaWithHints = renderIntegrationSchema;

export async function docsCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {}, usage);
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const target = fileURLToPath(new URL('../../docs/connectors/hcm.md', import.meta.url));
  await writeHcmDocs(target);
  const schema = renderSchemaWithHints();
  writeFileSync(integrationSchemaPath, schema);
  writeFileSync(validatorModulePath, renderValidatorModule(JSON.parse(schema) as Record<string, unknown>));
  writeFileSync(inputValidatorsModulePath, renderInputValidatorsModule(allActions));
  const triggers = writeTriggerDocs();
  const settings = writeSettingsDocs();
  process.stdout.write(
    `wrote ${target}\nwrote ${integrationSchemaPath}\nwrote ${validatorModulePath}\nwrote ${inputValidatorsModulePath}\nwrote ${triggers}\nwrote ${settings}\n`,
  );
  return 0;
}
