/**
 * Runs once before the suite: makes sure the local PostgreSQL answers (starting it when it is
 * down) so the PostgreSQL tests run rather than skip, and tells them its URL.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  if (process.env.HCM_TEST_DATABASE_URL) return;
  const script = fileURLToPath(new URL('../scripts/ensure-postgres.sh', import.meta.url));
  try {
    process.env.HCM_TEST_DATABASE_URL = execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  } catch {
    // The PostgreSQL tests fail with the script's message; everything else still runs.
  }
}
