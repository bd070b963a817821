/**
 * `hcm-runner listen NAME [--no-follow] [--off]` — listening mode: requests to the integration's
 * test URL are captured. By default the command stays, printing each capture as it arrives (its
 * id, method, path, time, a body preview and the exact `payloads save` command), until Ctrl-C
 * turns listening off again. It polls the captures API (GET …/captures, newest first) every
 * 500 ms and remembers the ids it has shown, so it works with any server version.
 */
import { AdminClient, AdminError, clientHelp, enc, runClient, serverFlag } from './admin-client.js';
import { intFlag, parse, UsageError } from './args.js';

export const listenUsage = `Usage: hcm-runner listen NAME [--no-follow] [--off]

Turns listening mode on and prints each request to the integration's test URL as it is captured:
its capture id, method, path, time and a body preview, with the command that saves it as a
payload. Ctrl-C turns listening off and exits.
  --no-follow      turn listening on and exit at once (captures: GET /api/integrations/NAME/captures)
  --off            turn listening off
  --interval MS    how often to look for new captures (default 500)
${clientHelp}`;

interface Capture {
  id: string;
  receivedAt: string;
  trigger?: {
    method?: string;
    pathFragment?: string;
    queryParameters?: Record<string, string | string[]>;
    body?: { data: unknown; contentType?: string };
    rawBody?: { data: string; contentType?: string };
  };
}

/** The most captures one look returns; more arriving within one interval are reported as missed. */
const PAGE = 50;

export async function listenCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...serverFlag, off: { type: 'boolean' }, 'no-follow': { type: 'boolean' }, interval: { type: 'string' } },
    listenUsage,
  );
  if (values.help) {
    process.stdout.write(`${listenUsage}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected exactly one integration NAME\n\n${listenUsage}`);
  const intervalMs = Math.max(50, intFlag(values.interval as string | undefined, 'interval', 500));
  const client = new AdminClient(values.server as string | undefined, values.data as string | undefined);
  const name = positionals[0]!;
  if (values.off) {
    return runClient(async () => {
      await client.call('DELETE', `/integrations/${enc(name)}/listen`);
      process.stdout.write('listening mode off\n');
    });
  }
  const saveHint = (id: string) =>
    ['npx hcm-runner payloads save', name, 'PAYLOAD_NAME', '--capture', id, ...passThrough(values as Record<string, unknown>)].join(' ');

  return runClient(async () => {
    // What was captured before this session is not news.
    const seen = new Set((await captures(client, name)).map((c) => c.id));
    const r = await client.call<{ listening: boolean; testUrl?: string }>('POST', `/integrations/${enc(name)}/listen`);
    const target = r.testUrl ?? 'the test URL';
    if (values['no-follow']) {
      process.stdout.write(
        `listening: requests to ${target} are captured\nsee them with GET /api/integrations/${name}/captures; save one with: ${saveHint('CAPTURE_ID')}\n`,
      );
      return;
    }
    process.stdout.write(`listening: requests to ${target} are captured (Ctrl-C stops)\n`);
    const stop = stopSignal();
    try {
      await follow(client, name, seen, intervalMs, stop, saveHint);
    } finally {
      stop.dispose();
    }
    await client.call('DELETE', `/integrations/${enc(name)}/listen`);
    process.stdout.write('listening mode off\n');
  });
}

/** Prints captures not seen yet, oldest first, until the stop signal. */
async function follow(
  client: AdminClient,
  name: string,
  seen: Set<string>,
  intervalMs: number,
  stop: StopSignal,
  saveHint: (id: string) => string,
): Promise<void> {
  let unreachable = false;
  while (!stop.stopped) {
    try {
      const list = await captures(client, name);
      if (unreachable) process.stderr.write('server reachable again\n');
      unreachable = false;
      const fresh = list.filter((c) => !seen.has(c.id)).reverse();
      if (fresh.length === PAGE && seen.size > 0) process.stderr.write(`more than ${PAGE} requests within ${intervalMs} ms: some were not shown\n`);
      for (const c of fresh) {
        seen.add(c.id);
        process.stdout.write(`${describeCapture(c)}\n  save it: ${saveHint(c.id)}\n`);
      }
    } catch (err) {
      if (!(err instanceof AdminError) || err.status === 401 || err.status === 404) throw err;
      if (!unreachable) process.stderr.write(`hcm-runner: ${err.message}; retrying\n`);
      unreachable = true;
    }
    await stop.wait(intervalMs);
  }
}

function captures(client: AdminClient, name: string): Promise<Capture[]> {
  return client.call<Capture[]>('GET', `/integrations/${enc(name)}/captures?limit=${PAGE}`);
}

/** `3f2c…  POST /orders?x=1  17:45:01  {"workerId":"Employee_ID=21001"}` */
export function describeCapture(c: Capture): string {
  const t = c.trigger ?? {};
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(t.queryParameters ?? {})) for (const one of Array.isArray(v) ? v : [v]) query.append(k, one);
  const path = `/${t.pathFragment ?? ''}${query.size ? `?${query}` : ''}`;
  const time = new Date(c.receivedAt);
  const shownTime = Number.isNaN(time.getTime()) ? c.receivedAt : time.toTimeString().slice(0, 8);
  return `${c.id}  ${t.method ?? '?'} ${path}  ${shownTime}  ${bodyPreview(t)}`;
}

function bodyPreview(t: NonNullable<Capture['trigger']>): string {
  const text = t.body ? (JSON.stringify(t.body.data) ?? '') : t.rawBody ? t.rawBody.data : '';
  if (!text) return '(no body)';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

/** The client flags the user gave, repeated in the hint so it can be pasted as is. */
function passThrough(values: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof values.server === 'string') out.push('--server', values.server);
  if (typeof values.data === 'string') out.push('--data', values.data);
  return out;
}

/** Ctrl-C (SIGINT) or SIGTERM ends the session; `wait` sleeps until the next look or the signal. */
interface StopSignal {
  readonly stopped: boolean;
  wait(ms: number): Promise<void>;
  dispose(): void;
}

function stopSignal(): StopSignal {
  let stopped = false;
  let wake: (() => void) | undefined;
  const onSignal = () => {
    stopped = true;
    wake?.();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  return {
    get stopped() {
      return stopped;
    },
    wait: (ms) =>
      new Promise<void>((done) => {
        if (stopped) return done();
        const t = setTimeout(done, ms);
        wake = () => {
          clearTimeout(t);
          done();
        };
      }),
    dispose: () => {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    },
  };
}
