/**
 * Whether `serve` traces, decided from the standard OpenTelemetry variables alone
 * (docs/operations.md "Tracing"). Imports nothing of OpenTelemetry: ./start.ts loads the SDK only
 * when these settings say so.
 */
import type { ExecutionTracer } from '../../common/tracing.js';

/** The OTLP/HTTP encodings the official exporters offer; `http/protobuf` is the specification's default. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  protocol: OtlpProtocol;
  /** Where spans are sent (the exporter's default, http://localhost:4318/v1/traces, when unset). */
  url?: string;
  /** `service.name` (OTEL_SERVICE_NAME; OTEL_RESOURCE_ATTRIBUTES may also set it). */
  serviceName?: string;
}

export interface Tracing {
  tracer: ExecutionTracer;
  /** Sends the spans still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/**
 * On when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) or `OTEL_TRACES_EXPORTER` names `otlp` (then the specification's
 * default endpoint, http://localhost:4318); off with `OTEL_SDK_DISABLED=true`, with
 * `OTEL_TRACES_EXPORTER=none`, or when `OTEL_TRACES_EXPORTER` names only exporters other than
 * `otlp`. Anything not understood is warned about, never fatal: tracing is not worth refusing to start.
 */
export function tracingSettings(env: NodeJS.ProcessEnv, warn: (message: string) => void = () => undefined): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return undefined;
  const unsupported = exporters.filter((e) => e !== 'otlp');
  if (unsupported.length)
    warn(
      `OTEL_TRACES_EXPORTER: ${unsupported.join(', ')} not supported (only otlp, over HTTP); ${exporters.includes('otlp') ? 'ignored' : 'tracing is off'}`,
    );
  const traces = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim();
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim();
  const on = exporters.length ? exporters.includes('otlp') : traces !== '' || base !== '';
  if (!on) return undefined;
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const asked = env[name]?.trim().toLowerCase() || 'http/protobuf';
  let protocol: OtlpProtocol = 'http/protobuf';
  if (PROTOCOLS.includes(asked)) protocol = asked as OtlpProtocol;
  else warn(`${name}: "${asked}" not supported (http/protobuf or http/json); exporting with http/protobuf`);
  // As the specification says: the signal's own endpoint as it is, the base one with /v1/traces.
  // Resolved here (the exporter would read the process's variables) so `env` alone decides.
  const url = traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  return { protocol, ...(url ? { url } : {}), ...(serviceName ? { serviceName } : {}) };
}
