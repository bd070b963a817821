/**
 * The console's script and style sheet by file name. They are TypeScript modules holding the
 * files' text, so the compiled runner (dist/) serves them with no copy step.
 */
import { consoleScript } from './assets/script.js';
import { consoleStyle } from './assets/style.js';

/**
 * `/favicon.ico`: a 16×16 icon (a PNG in an ICO container), so browsers asking for it on every
 * page get one instead of a 404.
 */
export const FAVICON = Buffer.from(
  'AAABAAEAEBAAAAEAIABmAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgGAAAAH/P/YQAAAC1JREFUeNpjYAAC1eTX/8nBDJRohhtCdQNgYNQA3IB+BhArPhwNoH9eoDQ7AwD+DqXnoGA/pAAAAABJRU5ErkJggg==',
  'base64',
);

export function consoleAssets(): Map<string, { body: string; type: string }> {
  return new Map([
    ['console.js', { body: consoleScript, type: 'text/javascript; charset=utf-8' }],
    ['console.css', { body: consoleStyle, type: 'text/css; charset=utf-8' }],
  ]);
}
