/**
 * The repo explains itself: code, docs, tests and examples point at the repo's own docs, never at
 * documents a reader of the repo does not have (the product brief, a shared folder, a seed).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { filesBelow } from '../helpers/files.js';

/** Wordings of a reference to something outside the repo. */
const outside = [/PRODUCT(\.md| ?§)/, /\.\.\/shared\b/, /hcm-wire/, /wire reference/i, /\bthe seed's\b/i];

it('no file in src/, docs/, test/, integrations/ or the README cites a document outside the repo', () => {
  const files = [
    ...['src', 'docs', 'test', 'integrations', 'bench', 'scripts'].flatMap((d) => filesBelow(join(repoRoot, d), /\.(ts|tsx|js|md|ya?ml|sh|json)$/)),
    join(repoRoot, 'README.md'),
  ];
  const self = relative(repoRoot, new URL(import.meta.url).pathname);
  const hits: string[] = [];
  for (const file of files) {
    const rel = relative(repoRoot, file);
    if (rel === self) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (outside.some((re) => re.test(line))) hits.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(hits).toEqual([]);
});
