/**
 * One outbound HTTP call as the interceptors of the stack (./stack.ts) see it: the caller's
 * settings travel with the dispatch options (`call`), and every failure ends as an ActionError
 * worded by `callFailure`, the one place that names network errors, timeouts and refusals.
 */
import type { Dispatcher } from 'undici';
import { ActionError } from '../../common/errors.js';
import type { LogLevel } from '../types.js';
import { outboundRefusal } from '../outbound-policy.js';
import type { RetryRules } from './retry-rules.js';

/** An answer read whole (within the body limit). */
export interface Answer {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  /** The Content-Type header ('' when absent). */
  contentType: string;
  bytes: Buffer;
}

export interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Aborted on step timeout or shutdown. */
  signal: AbortSignal;
  /** Names the call at the start of every error: `hcm.listWorkers`, `GET https://x.example/hooks`. */
  label: string;
  /** Named in network errors ("network error calling HCM"). */
  peer?: string;
  /** Turns an error answer (status ≥ 400) into the caller's error; without it error answers are results. */
  answerError?: (answer: Answer) => ActionError;
  /** Transport retries (Raw Request, core.http); none when absent. */
  retry?: RetryRules;
  /** Per attempt, headers and body (ms). */
  timeoutMs?: number;
  /** Largest response body read (the step result limit, ../result-limit.ts). */
  maxBodyBytes: number;
  log?: (level: LogLevel, message: string) => void;
}

export type CallDispatchOptions = Dispatcher.DispatchOptions & { call: Call };

export function callOf(opts: Dispatcher.DispatchOptions): Call {
  const call = (opts as Partial<CallDispatchOptions>).call;
  if (!call) throw new Error('HTTP stack: dispatched without call settings (use send() from connectors/http/stack.ts)');
  return call;
}

/** Any failure of a call as the ActionError the step sees. */
export function callFailure(err: unknown, call: Call): ActionError {
  if (err instanceof ActionError) return err;
  if (call.signal.aborted) {
    const reason: unknown = call.signal.reason;
    return reason instanceof ActionError ? reason : new ActionError(`${call.label}: request aborted`, { code: 'aborted', retryable: false });
  }
  const refused = outboundRefusal(err);
  // A policy refusal is the same on every attempt: fail now, naming address and flag.
  if (refused) return new ActionError(`${call.label}: ${refused.message}`, { code: 'outbound_refused', retryable: false });
  const e = err as Error & { code?: string };
  return new ActionError(`${call.label}: network error${call.peer ? ` calling ${call.peer}` : ''} (${e.code ?? e.name}: ${e.message})`, {
    code: 'network_error',
    retryable: true,
  });
}
