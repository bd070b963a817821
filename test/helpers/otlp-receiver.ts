/**
 * An OTLP/HTTP trace receiver for tests: a loopback server taking `POST /v1/traces` as the
 * official exporters send it — `application/json` (http/json) or `application/x-protobuf`
 * (http/protobuf, read with a small wire-format reader of the OTLP trace messages below) — and
 * keeping every span in one shape, whichever encoding brought it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** Base URL: what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = String(req.headers['content-type'] ?? '');
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      try {
        spans.push(...(type.includes('json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      if (type.includes('json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// http/json -----------------------------------------------------------------------------------------

type JsonKeyValue = { key: string; value: Record<string, unknown> };

function jsonValue(v: Record<string, unknown>): AttributeValue {
  if ('stringValue' in v) return String(v.stringValue);
  if ('boolValue' in v) return Boolean(v.boolValue);
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  return JSON.stringify(v);
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

function fromJson(doc: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttributes(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          resource,
        });
  }
  return out;
}

// http/protobuf: the protobuf wire format, for the fields of ExportTraceServiceRequest read here -----

interface Field {
  no: number;
  /** Varint and fixed values as numbers (precision beyond 2^53 does not matter for what is read). */
  num?: number;
  /** Length-delimited contents; a fixed64's eight bytes (a double). */
  bytes?: Buffer;
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) out.push({ no, num: varint() });
    else if (wire === 1) {
      out.push({ no, num: Number(buf.readBigUInt64LE(pos)), bytes: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 2) {
      const len = varint();
      if (pos + len > buf.length) throw new Error('protobuf: truncated field');
      out.push({ no, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 5) {
      out.push({ no, num: buf.readUInt32LE(pos) });
      pos += 4;
    } else throw new Error(`protobuf: wire type ${wire} not expected`);
  }
  return out;
}

const all = (f: Field[], no: number) => f.filter((x) => x.no === no);
const one = (f: Field[], no: number) => f.find((x) => x.no === no);

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double. */
function anyValue(buf: Buffer): AttributeValue {
  const [v] = fields(buf);
  if (!v) return '';
  if (v.no === 1) return v.bytes!.toString('utf8');
  if (v.no === 2) return v.num === 1;
  if (v.no === 3) return v.num!;
  if (v.no === 4) return v.bytes!.readDoubleLE(0);
  return `(field ${v.no})`;
}

/** KeyValue: 1 key, 2 value. */
function keyValues(list: Field[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list) {
    const f = fields(kv.bytes!);
    out[one(f, 1)!.bytes!.toString('utf8')] = anyValue(one(f, 2)?.bytes ?? Buffer.alloc(0));
  }
  return out;
}

/** ExportTraceServiceRequest 1 → ResourceSpans (1 resource, 2 scope spans) → ScopeSpans (2 spans) → Span. */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsf = fields(rs.bytes!);
    const resourceField = one(rsf, 1);
    const resource = resourceField ? keyValues(all(fields(resourceField.bytes!), 1)) : {};
    for (const ss of all(rsf, 2))
      for (const sp of all(fields(ss.bytes!), 2)) {
        const s = fields(sp.bytes!);
        const status = one(s, 15) ? fields(one(s, 15)!.bytes!) : [];
        out.push({
          traceId: one(s, 1)!.bytes!.toString('hex'),
          spanId: one(s, 2)!.bytes!.toString('hex'),
          parentSpanId: one(s, 4)?.bytes?.toString('hex') ?? '',
          name: one(s, 5)?.bytes?.toString('utf8') ?? '',
          kind: one(s, 6)?.num ?? 0,
          attributes: keyValues(all(s, 9)),
          status: { code: one(status, 3)?.num ?? 0, message: one(status, 2)?.bytes?.toString('utf8') ?? '' },
          resource,
        });
      }
  }
  return out;
}
