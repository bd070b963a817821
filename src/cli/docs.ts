/**
 * `hcm-runner docs`: regenerates what is derived from the action declarations (`npm run docs`):
 * docs/connectors/hcm.md and the editor hints in schemas/integration.schema.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allActions } from '../connectors/catalog.js';
import { writeHcmDocs } from '../connectors/hcm/docs.js';
import { applySchemaHints } from '../definition/schema-hints.js';
import { integrationSchemaPath } from '../definition/schema-validator.js';
import { parse } from './args.js';

const usage = 'Usage: hcm-runner docs\n\nRegenerates docs/connectors/hcm.md and the editor hints in schemas/integration.schema.json\nfrom the action declarations.';

export function renderSchemaWithHints(): string {
  const schema = JSON.parse(readFileSync(integrationSchemaPath, 'utf8')) as Record<string, unknown>;
  return JSON.stringify(applySchemaHints(schema, allActions), null, 2) + '\n';
}

export async function docsCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {}, usage);
  if (values.help) {
    process.stdout.write(usage + '\n');
    return 0;
  }
  const target = fileURLToPath(new URL('../../docs/connectors/hcm.md', import.meta.url));
  await writeHcmDocs(target);
  writeFileSync(integrationSchemaPath, renderSchemaWithHints());
  process.stdout.write(`wrote ${target}\nwrote ${integrationSchemaPath}\n`);
  return 0;
}
