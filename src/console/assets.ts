/**
 * The console's script and style sheet by file name. They are TypeScript modules holding the
 * files' text, so the compiled runner (dist/) serves them with no copy step.
 */
import { consoleScript } from './assets/script.js';
import { consoleStyle } from './assets/style.js';

export function consoleAssets(): Map<string, { body: string; type: string }> {
  return new Map([
    ['console.js', { body: consoleScript, type: 'text/javascript; charset=utf-8' }],
    ['console.css', { body: consoleStyle, type: 'text/css; charset=utf-8' }],
  ]);
}
