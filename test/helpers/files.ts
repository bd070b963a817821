import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file below `dir` whose name matches `ext` (node_modules and dot-entries skipped). */
export function filesBelow(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...filesBelow(full, ext));
    else if (ext.test(name)) out.push(full);
  }
  return out;
}
