/**
 * Child processes for the benchmarks: every server under test runs in its own Node process
 * (forked with tsx), so the load generator (this process) and the server each get a core.
 * Children talk over the IPC channel: they send `{type: 'ready', ...}` once listening and answer
 * `{type: 'call', id, cmd, args}` messages with `{type: 'reply', id, result | error}`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productNodeFlags } from './product.js';

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = join(benchDir, '..');

export interface Child<R = Record<string, unknown>> {
  proc: ChildProcess;
  ready: R;
  call<T = unknown>(cmd: string, args?: unknown): Promise<T>;
  /** Asks the child to stop (graceful), kills it after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<number | null>;
}

export interface StartChildOptions {
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/x']. */
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Milliseconds to wait for `ready` (default 60 s). */
  readyTimeoutMs?: number;
  /** Child's stdout: 'ignore' (default; pino logs still cost their write) or 'inherit'. */
  stdout?: 'ignore' | 'inherit';
}

/** Forks `bench/targets/<target>.ts` with `config` (JSON in BENCH_CONFIG) and waits for ready. */
export async function startChild<R = Record<string, unknown>>(target: string, config: unknown, opts: StartChildOptions = {}): Promise<Child<R>> {
  const proc = fork(join(benchDir, 'targets', `${target}.ts`), [], {
    execArgv: ['--import', 'tsx', ...productNodeFlags(), ...(opts.nodeArgs ?? [])],
    env: { ...process.env, ...opts.env, BENCH_CONFIG: JSON.stringify(config ?? {}) },
    stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit', 'ipc'],
    cwd: repoRoot,
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r((exitCode = code))));
  const ready = await new Promise<R>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${target}: not ready after ${opts.readyTimeoutMs ?? 60_000} ms`)), opts.readyTimeoutMs ?? 60_000);
    proc.on('message', (m: any) => {
      if (m?.type === 'ready') {
        clearTimeout(t);
        resolve(m as R);
      } else if (m?.type === 'reply') {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.error) p?.reject(new Error(`${target} ${m.error}`));
        else p?.resolve(m.result);
      }
    });
    void exited.then((code) => {
      clearTimeout(t);
      reject(new Error(`${target} exited with ${code} before it was ready`));
      for (const p of pending.values()) p.reject(new Error(`${target} exited with ${code}`));
    });
  });
  return {
    proc,
    ready,
    call: <T>(cmd: string, args?: unknown) =>
      new Promise<T>((resolve, reject) => {
        if (exitCode !== undefined) return reject(new Error(`${target} has exited`));
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        proc.send({ type: 'call', id, cmd, args });
      }),
    stop: async (timeoutMs = 15_000) => {
      if (exitCode !== undefined) return exitCode;
      proc.send({ type: 'call', id: 0, cmd: 'stop' });
      const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** The child side: announce readiness and serve calls. `stop` is handled by the child's handler too. */
export function serveParent(ready: Record<string, unknown>, handlers: Record<string, (args: any) => unknown>): void {
  process.on('message', async (m: any) => {
    if (m?.type !== 'call') return;
    const h = handlers[m.cmd];
    try {
      if (!h) throw new Error(`unknown command ${m.cmd}`);
      const result = await h(m.args);
      if (m.id !== 0) process.send?.({ type: 'reply', id: m.id, result });
    } catch (err) {
      process.send?.({ type: 'reply', id: m.id, error: (err as Error).message });
    }
  });
  process.send?.({ type: 'ready', ...ready });
}

export function childConfig<T>(): T {
  return JSON.parse(process.env.BENCH_CONFIG ?? '{}') as T;
}
