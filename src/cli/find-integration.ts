/** Finds an integration by file path or by `name:` in a folder, for commands that name one. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { listIntegrationFiles, loadFile } from '../definition/load.js';
import { formatProblems } from '../definition/problems.js';
import type { CompiledIntegration } from '../definition/types.js';
import { UsageError } from './args.js';
import { cliFileLimits } from './settings.js';

export function findIntegration(nameOrFile: string, dir: string): CompiledIntegration {
  if (existsSync(nameOrFile) && statSync(nameOrFile).isFile()) return mustLoad(nameOrFile);
  const { files } = listIntegrationFiles([dir]);
  const limits = cliFileLimits();
  for (const f of files) {
    const l = loadFile(resolve(f), f, limits);
    if (l.integration?.name === nameOrFile) return l.integration;
  }
  throw new UsageError(`no integration named "${nameOrFile}" in ${dir} (give its name or its file)`);
}

function mustLoad(file: string): CompiledIntegration {
  const l = loadFile(resolve(file), file, cliFileLimits());
  if (!l.integration) throw new UsageError(`${file} has problems:\n${formatProblems(l.problems, 'text')}`);
  return l.integration;
}
