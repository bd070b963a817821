/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile DIR`, i.e. `node --cpu-prof`):
 * the functions and the files/packages with the most self time.
 *
 *   node --import tsx bench/profile-summary.ts DIR_OR_FILE [--top N]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
const top = Number(values.top ?? 25);
for (const p of positionals) {
  const files = statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(p, f))
    : [p];
  for (const f of files) summarise(f);
}

function where(url: string): string {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = u.slice(nm + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = u.indexOf('/src/');
  if (src >= 0) return u.slice(src + 1);
  return u || '(native)';
}

function summarise(file: string): void {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i]!, (self.get(prof.samples[i]!) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const cf = n.callFrame;
    const key = `${cf.functionName || '(anonymous)'}  ${where(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    const w = cf.url ? where(cf.url) : cf.functionName;
    byFile.set(w, (byFile.get(w) ?? 0) + us);
  }
  // Inclusive (total) time per function: self time of the node and all its descendants, each
  // function counted once per stack (recursion is not double counted).
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n: Node) =>
    `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  const incl = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = keyOf(byId.get(cur)!);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + us);
    }
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
  console.log(`\n== ${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  console.log('-- self time by function');
  for (const [k, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
  console.log('-- total (inclusive) time by function, project code');
  for (const [k, us] of [...incl]
    .filter(([k]) => /src\/|bench\//.test(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`${pct(us)}  ${k}`);
  console.log('-- self time by file / package');
  for (const [k, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
}
