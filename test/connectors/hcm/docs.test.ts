import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderHcmDocs } from '../../../src/connectors/hcm/docs.js';

const file = fileURLToPath(new URL('../../../docs/connectors/hcm.md', import.meta.url));

describe('docs/connectors/hcm.md', () => {
  it('is up to date with the declarations', () => {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      /* missing */
    }
    expect(current === renderHcmDocs(), 'docs/connectors/hcm.md is stale: run `npm run docs`').toBe(true);
  });

  it('has one table per service and every action', () => {
    const md = renderHcmDocs();
    expect(md.match(/^## /gm)).toHaveLength(12);
    expect(md.match(/^\| `hcm\./gm)).toHaveLength(55);
  });
});

describe('declared results', () => {
  it('every action says what it returns, shown in the docs and the editor hints', async () => {
    const { allActions } = await import('../../../src/connectors/catalog.js');
    for (const a of allActions) expect(a.output?.description, a.key).toBeTruthy();
    const listWorkers = allActions.find((a) => a.key === 'hcm.listWorkers')!;
    expect(listWorkers.output?.keys).toEqual(['data', 'total']);
    expect(renderHcmDocs()).toContain('One page {data, total}');
  });
});

describe('declarations are plain data', () => {
  it('import nothing but each other and the connector types', async () => {
    const { readdirSync } = await import('node:fs');
    const dir = fileURLToPath(new URL('../../../src/connectors/hcm/declarations/', import.meta.url));
    for (const f of readdirSync(dir)) {
      const src = readFileSync(dir + f, 'utf8');
      for (const m of src.matchAll(/from '([^']+)'/g)) expect(m[1], `${f} imports ${m[1]}`).toMatch(/^(\.\/[\w-]+\.js|\.\.\/\.\.\/types\.js)$/);
    }
  });
});
