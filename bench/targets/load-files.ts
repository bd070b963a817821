/** `loadFiles` on a folder in a fresh process: parse + compile time and memory, no server. */
import { listIntegrationFiles, loadFiles } from '../../src/definition/load.js';
import { childConfig, serveParent } from '../lib/proc.js';

const { dir } = childConfig<{ dir: string }>();
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const loaded = loadFiles(listIntegrationFiles([dir]).files);
const ms = performance.now() - t0;
const ok = loaded.filter((l) => l.integration).length;
const problems = loaded.reduce((n, l) => n + l.problems.length, 0);
serveParent({ ms, files: loaded.length, ok, problems, rssBefore, memory: process.memoryUsage() }, { stop: () => process.exit(0) });
