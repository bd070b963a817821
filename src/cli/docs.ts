/** `hcm-runner docs`: regenerates the docs derived from declarations (`npm run docs`). */
import { fileURLToPath } from 'node:url';
import { writeHcmDocs } from '../connectors/hcm/docs.js';
import { parse } from './args.js';

const usage = 'Usage: hcm-runner docs\n\nRegenerates docs/connectors/hcm.md from the HCM action declarations.';

export async function docsCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {}, usage);
  if (values.help) {
    process.stdout.write(usage + '\n');
    return 0;
  }
  const target = fileURLToPath(new URL('../../docs/connectors/hcm.md', import.meta.url));
  await writeHcmDocs(target);
  process.stdout.write(`wrote ${target}\n`);
  return 0;
}
