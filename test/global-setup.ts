/**
 * Runs once before the suite: makes sure the local PostgreSQL answers (starting it when it is
 * down) so the PostgreSQL tests run rather than skip, and tells them its URL; and makes sure
 * Debian's Chromium is installed for the console's browser tests (`npm test` on a new machine).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = (name: string) => fileURLToPath(new URL(`../scripts/${name}`, import.meta.url));

export default function setup(): void {
  if (!process.env.CHROMIUM_PATH) {
    try {
      execFileSync('bash', [script('ensure-chromium.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 });
    } catch {
      // The browser tests fail with the script's message; everything else still runs.
    }
  }
  if (process.env.HCM_TEST_DATABASE_URL) return;
  try {
    process.env.HCM_TEST_DATABASE_URL = execFileSync('bash', [script('ensure-postgres.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  } catch {
    // The PostgreSQL tests fail with the script's message; everything else still runs.
  }
}
