/**
 * The tracing seam (../../common/tracing.ts) implemented with the official OpenTelemetry SDK:
 * imported only by ./start.ts, and only when the OTEL_* variables turn tracing on. The exporter
 * reads its own variables (endpoint, headers, timeout, compression), the provider the sampler and
 * the batch processor theirs; the resource is `service.name` hcm-runner unless OTEL_SERVICE_NAME
 * or OTEL_RESOURCE_ATTRIBUTES say otherwise. Spans and attributes: docs/operations.md "Tracing".
 */
import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import {
  type ActiveStepTrace,
  type ClientTrace,
  type ExecutionTrace,
  type ExecutionTracer,
  stepTraceStorage,
  type TracedStep,
} from '../../common/tracing.js';
import type { Tracing, TracingSettings } from './settings.js';

const propagator = new W3CTraceContextPropagator();

export function startOpenTelemetry(settings: TracingSettings, logger?: Logger): Tracing {
  // Export failures (collector down, refused) go to our log instead of nowhere.
  if (logger)
    diag.setLogger(
      {
        error: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
        warn: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  const config = settings.url ? { url: settings.url } : {};
  const exporter = settings.protocol === 'http/json' ? new JsonTraceExporter(config) : new ProtobufTraceExporter(config);
  // OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES, which wins over our default.
  let resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'hcm-runner' }))
    .merge(detectResources({ detectors: [envDetector] }));
  if (settings.serviceName) resource = resource.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return {
    tracer: new OtelExecutionTracer(provider.getTracer('hcm-runner')),
    shutdown: () => boundedShutdown(provider),
  };
}

/** Shutdown sends what is buffered, but an endpoint that never answers does not hold the process for long. */
const SHUTDOWN_LIMIT_MS = 5000;

function boundedShutdown(provider: BasicTracerProvider): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the exporter did not finish within ${SHUTDOWN_LIMIT_MS} ms`)), SHUTDOWN_LIMIT_MS);
    timer.unref();
  });
  return Promise.race([provider.shutdown(), late]).finally(() => clearTimeout(timer));
}

class OtelExecutionTracer implements ExecutionTracer {
  constructor(private readonly tracer: Tracer) {}

  startExecution(e: { id: string; integration: string; attempt: number; test: boolean; trigger: unknown }): ExecutionTrace {
    const parent = remoteParent(e.trigger);
    const attributes = {
      'hcm_runner.integration': e.integration,
      'hcm_runner.execution_id': e.id,
      'hcm_runner.attempt': e.attempt,
    };
    const span = this.tracer.startSpan(`execution ${e.integration}`, { attributes: { ...attributes, 'hcm_runner.test': e.test } }, parent);
    return new OtelExecution(this.tracer, span, trace.setSpan(parent, span), attributes);
  }
}

/** The webhook request's W3C trace context, from the headers `$trigger` kept (any trigger that has them). */
function remoteParent(trigger: unknown): Context {
  const headers = (trigger as { headers?: unknown } | null | undefined)?.headers;
  if (!headers || typeof headers !== 'object') return ROOT_CONTEXT;
  const { traceparent, tracestate } = headers as Record<string, unknown>;
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent };
  if (typeof tracestate === 'string') carrier.tracestate = tracestate;
  // A malformed (or redacted) traceparent is ignored by the propagator: the run starts a trace.
  return propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

class OtelExecution implements ExecutionTrace {
  readonly traceId: string;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly context: Context,
    private readonly attributes: Record<string, string | number>,
  ) {
    this.traceId = span.spanContext().traceId;
  }

  step<T>(step: TracedStep, run: () => Promise<T>): Promise<T> {
    const storage = stepTraceStorage();
    // A step inside another of this execution's steps (a group) is that step's child.
    const outer = storage.getStore();
    const parent = outer instanceof OtelStep && outer.execution === this ? outer.context : this.context;
    const span = this.tracer.startSpan(
      `step ${step.id}`,
      { attributes: { ...this.attributes, 'hcm_runner.step': step.id, 'hcm_runner.action': step.action } },
      parent,
    );
    const active = new OtelStep(this, this.tracer, trace.setSpan(parent, span));
    return storage.run(active, run).then(
      (value) => {
        endStep(span, step);
        return value;
      },
      (err: unknown) => {
        endStep(span, step, err as Error);
        throw err;
      },
    );
  }

  end(outcome: { status: string; error?: { message: string } }): void {
    this.span.setAttribute('hcm_runner.status', outcome.status);
    if (outcome.status === 'failed') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error?.message });
    this.span.end();
  }
}

/** The step's record says how it ended (a core.stop rejects the run, yet the step succeeded). */
function endStep(span: Span, step: TracedStep, thrown?: Error): void {
  span.setAttribute('hcm_runner.step_status', step.status);
  if (step.attempts !== undefined) span.setAttribute('hcm_runner.step_attempts', step.attempts);
  if (step.status === 'failed') {
    if (step.error?.code) span.setAttribute(ATTR_ERROR_TYPE, step.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: step.error?.message });
  } else if (thrown && step.status === 'running') {
    span.setStatus({ code: SpanStatusCode.ERROR, message: thrown.message });
  }
  span.end();
}

class OtelStep implements ActiveStepTrace {
  constructor(
    readonly execution: OtelExecution,
    private readonly tracer: Tracer,
    readonly context: Context,
  ) {}

  startClient(method: string, url: string): ClientTrace {
    const attributes: Record<string, string | number> = { [ATTR_HTTP_REQUEST_METHOD]: method };
    try {
      const u = new URL(url);
      // Without the query string: it may carry credentials or personal data.
      attributes[ATTR_URL_FULL] = `${u.origin}${u.pathname}`;
      attributes[ATTR_SERVER_ADDRESS] = u.hostname;
      attributes[ATTR_SERVER_PORT] = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
    } catch {
      // Not a URL undici would send; the span still says which method.
    }
    const span = this.tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes }, this.context);
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.context, span), carrier, defaultTextMapSetter);
    return {
      traceparent: carrier.traceparent ?? '',
      ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
      end(status, error) {
        if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (error) {
          span.setAttribute(ATTR_ERROR_TYPE, (error as { code?: string }).code ?? error.name);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        } else if (status !== undefined && status >= 400) {
          span.setAttribute(ATTR_ERROR_TYPE, String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  }
}
