/** When the standard OTEL_* variables turn tracing on (src/runtime/tracing/settings.ts, docs/operations.md "Tracing"). */
import { describe, expect, it } from 'vitest';
import { tracingSettings } from '../../src/runtime/tracing/settings.js';

function settings(env: NodeJS.ProcessEnv) {
  const warnings: string[] = [];
  return { on: tracingSettings(env, (m) => warnings.push(m)), warnings };
}

describe('tracing settings', () => {
  it('off with nothing set, on with either endpoint, which says where spans go', () => {
    expect(settings({}).on).toBeUndefined();
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }).on).toBeUndefined();
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).on).toEqual({
      protocol: 'http/protobuf',
      url: 'http://collector:4318/v1/traces',
    });
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' }).on?.url).toBe(
      'https://b/otlp/traces',
    );
  });

  it('OTEL_TRACES_EXPORTER=otlp turns it on without an endpoint (the exporter default); none and OTEL_SDK_DISABLED turn it off', () => {
    expect(settings({ OTEL_TRACES_EXPORTER: 'otlp' }).on).toEqual({ protocol: 'http/protobuf' });
    expect(settings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).on).toBeUndefined();
    expect(settings({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).on).toBeUndefined();
    expect(settings({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).on).toBeDefined();
  });

  it('other exporters are warned about: alone they leave tracing off, next to otlp they are ignored', () => {
    const alone = settings({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' });
    expect(alone.on).toBeUndefined();
    expect(alone.warnings).toEqual(['OTEL_TRACES_EXPORTER: zipkin not supported (only otlp, over HTTP); tracing is off']);
    const beside = settings({ OTEL_TRACES_EXPORTER: 'console, otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' });
    expect(beside.on).toBeDefined();
    expect(beside.warnings).toEqual(['OTEL_TRACES_EXPORTER: console not supported (only otlp, over HTTP); ignored']);
  });

  it('protocol: http/protobuf by default, http/json when asked (the traces variable first); grpc is warned about', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' };
    expect(settings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).on?.protocol).toBe('http/json');
    expect(settings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).on?.protocol).toBe(
      'http/protobuf',
    );
    const grpc = settings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(grpc.on?.protocol).toBe('http/protobuf');
    expect(grpc.warnings).toEqual(['OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" not supported (http/protobuf or http/json); exporting with http/protobuf']);
  });

  it('OTEL_SERVICE_NAME names the service', () => {
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SERVICE_NAME: 'onboarding' }).on?.serviceName).toBe('onboarding');
  });
});
