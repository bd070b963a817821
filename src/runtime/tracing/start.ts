/**
 * Starts tracing when the OTEL_* variables ask for it (./settings.ts), loading the SDK (./otel.ts)
 * only then: with tracing off, no `@opentelemetry/sdk-*` or exporter module is ever imported
 * (test/runtime/tracing.test.ts).
 */
import type { Logger } from 'pino';
import { type Tracing, tracingSettings } from './settings.js';

/** Starts the OpenTelemetry SDK when the variables ask for it (the SDK's modules are imported only then). */
export async function startTracing(env: NodeJS.ProcessEnv, logger?: Logger): Promise<Tracing | undefined> {
  const settings = tracingSettings(env, (message) => logger?.warn(message));
  if (!settings) return undefined;
  const { startOpenTelemetry } = await import('./otel.js');
  const tracing = startOpenTelemetry(settings, logger);
  logger?.info({ protocol: settings.protocol }, 'tracing: exporting spans over OTLP/HTTP');
  return tracing;
}
