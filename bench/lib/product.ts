/**
 * The product's code as the bench runs it: the compiled `dist/` — what `npm start` and the
 * `hcm-runner` command run — built by bench/run.ts before any scenario. Importing `src/` through
 * tsx measures esbuild's output instead, which wraps every closure the hot path creates in a
 * `__name(…)` call (1–3 % of the runner's samples in the intake and end-to-end profiles; within
 * this machine's noise in requests/s), none of which runs in production. `BENCH_SOURCE=src`
 * measures the TypeScript sources instead.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The checkout whose product runs: this one, or BENCH_PRODUCT_ROOT — another checkout (e.g. the
 * commit a change is compared with: `npm run bench -- --baseline DIR`), whose dist/ the bench's
 * own targets import, so both sides are driven by the same bench code.
 */
const root = process.env.BENCH_PRODUCT_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fromSource = process.env.BENCH_SOURCE === 'src';

/** `dist/<path>` (or `src/<path>` with BENCH_SOURCE=src), typed as the source module `T`. */
export async function product<T>(path: string): Promise<T> {
  const file = fromSource ? join(root, 'src', path.replace(/\.js$/, '.ts')) : join(root, 'dist', path);
  return (await import(pathToFileURL(file).href)) as T;
}

/** Compiles src/ to dist/ (incremental: seconds when nothing changed), so the bench runs the code as it is now. */
export function buildProduct(checkout = root): string {
  if (fromSource) return 'TypeScript sources through tsx (BENCH_SOURCE=src)';
  execFileSync(process.execPath, [join(checkout, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(checkout, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
  return 'the compiled dist/ (as `npm start` runs it)';
}

/**
 * The Node flags the `hcm-runner` command starts with: those after `node` on the first line of
 * bin/hcm-runner.js (one place says how the runner runs). Every bench process gets them, the
 * bare Hono baseline too, so the comparison is of code, not of GC settings.
 */
export function productNodeFlags(): string[] {
  const shebang = readFileSync(join(root, 'bin', 'hcm-runner.js'), 'utf8').split('\n', 1)[0]!;
  const words = shebang.replace(/^#!/, '').trim().split(/\s+/);
  return words.slice(words.indexOf('node') + 1);
}
