/** `loadFiles` on a folder in a fresh process: parse + compile time, CPU and memory, no server. */
import { product } from '../lib/product.js';
import { childConfig, serveParent } from '../lib/proc.js';

const { listIntegrationFiles, loadFiles } = await product<typeof import('../../src/definition/load.js')>('definition/load.js');

const { dir } = childConfig<{ dir: string }>();
const rssBefore = process.memoryUsage().rss;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const loaded = loadFiles(listIntegrationFiles([dir]).files);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const ok = loaded.filter((l) => l.integration).length;
const problems = loaded.reduce((n, l) => n + l.problems.length, 0);
serveParent({ ms, cpuMs, files: loaded.length, ok, problems, rssBefore, memory: process.memoryUsage() }, { stop: () => process.exit(0) });
