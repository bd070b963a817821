/**
 * Mocks: which steps call out (and so need one), and how a mocked answer reaches the engine —
 * results as they are, errors as the ActionError the real connector raises for that answer, so
 * retry classification, `onError: continue` and `$errors` behave exactly as in production.
 */
import { STATUS_CODES } from 'node:http';
import { ActionError } from '../common/errors.js';
import { thirdPartyAnswerError, callLabel } from '../connectors/core/http.js';
import { httpError } from '../connectors/hcm/http.js';
import type { StoredTokens, TokenStore } from '../connectors/types.js';
import type { MockError } from './types.js';

/** Connector actions and core.http reach other systems; the other built-ins run for real in tests. */
export function callsOut(actionKey: string): boolean {
  return !actionKey.startsWith('core.') || actionKey === 'core.http';
}

export function mockedError(actionKey: string, e: MockError, inputs: Record<string, unknown>): ActionError {
  const { statusCode, message, ...rest } = e;
  if (statusCode === undefined) {
    // No answer at all: what a connector raises for a network failure (retried).
    return new ActionError(`${actionKey}: network error (${message ?? 'mocked'})`, { code: 'network_error', retryable: true });
  }
  const body: Record<string, unknown> = { ...(message !== undefined ? { error: message } : {}), ...rest };
  if (actionKey.startsWith('hcm.')) {
    return httpError(actionKey, {
      status: statusCode,
      statusText: STATUS_CODES[statusCode] ?? '',
      headers: { 'content-type': 'application/json' },
      contentType: 'application/json',
      bytes: Buffer.from(JSON.stringify(body)),
    });
  }
  if (actionKey === 'core.http') return thirdPartyAnswerError(callLabel(inputs.method, String(inputs.url ?? '')), statusCode, body);
  return new ActionError(message ?? `failed with ${statusCode}`, {
    status: statusCode,
    remote: body,
    retryable: statusCode >= 500 || statusCode === 429,
  });
}

/** Tokens for `--sandbox` runs: kept in memory for the one command run. */
export class MemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, StoredTokens>();
  private readonly locks = new Map<string, Promise<unknown>>();

  async get(key: string): Promise<StoredTokens | undefined> {
    return this.tokens.get(key);
  }
  async set(key: string, tokens: StoredTokens): Promise<void> {
    this.tokens.set(key, tokens);
  }
  async delete(key: string): Promise<void> {
    this.tokens.delete(key);
  }
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.locks.get(key) ?? Promise.resolve()).then(fn, fn);
    this.locks.set(
      key,
      run.catch(() => undefined),
    );
    return run;
  }
}
