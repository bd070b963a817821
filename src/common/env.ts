/**
 * A whole number of at least 1 from an environment variable (a limit or a size): undefined when
 * the variable is unset or blank, a clear error naming it when it holds anything else.
 */
export function positiveIntEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return n;
}
