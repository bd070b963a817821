/**
 * The console's script and style sheet: plain files, served by the runner as they are (no
 * bundler, no CDN, no build step). They are read once, when the app is created.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

const FILES = ['console.js', 'console.css'];

/**
 * `src/console/assets/`, found from the package root so the same path works when this module
 * runs from src/ (tsx, tests) and when it runs compiled from dist/ (which holds no assets).
 */
const ASSETS_DIR = new URL('../../src/console/assets/', import.meta.url);

export function consoleAssets(): Map<string, { body: string; type: string }> {
  const out = new Map<string, { body: string; type: string }>();
  for (const file of FILES) {
    out.set(file, { body: readFileSync(fileURLToPath(new URL(file, ASSETS_DIR)), 'utf8'), type: TYPES[file.slice(file.lastIndexOf('.'))]! });
  }
  return out;
}
