/**
 * `hcm-runner listen NAME [--no-follow] [--off] [--show]` — listening mode: requests to the
 * integration's test URL are captured. By default the command stays, printing each capture as it
 * arrives (its id, method, path, time, size, a body preview and the exact `payloads save`
 * command), until Ctrl-C turns listening off again. It polls the captures API for summaries of
 * what came after the last one it saw (GET …/captures?summary=true&after=ID) every 500 ms, so a
 * poll costs a few hundred bytes per new capture however large the requests are; `--show` reads
 * each new capture in full (GET …/captures/{id}) and prints its trigger data. It also remembers the
 * ids it has shown, so a server that answers whole captures to the list works as well.
 */
import { AdminClient, AdminError, clientHelp, enc, runClient, serverFlag } from './admin-client.js';
import { intFlag, parse, UsageError } from './args.js';

export const listenUsage = `Usage: hcm-runner listen NAME [--no-follow] [--off]

Turns listening mode on and prints each request to the integration's test URL as it is captured:
its capture id, method, path, time, size and a body preview, with the command that saves it as a
payload. Ctrl-C turns listening off and exits.
  --show           also print each capture's trigger data (as stored: cut past the server's
                   HCM_RUNNER_CAPTURE_MAX_BYTES)
  --no-follow      turn listening on and exit at once (captures: GET /api/integrations/NAME/captures)
  --off            turn listening off
  --interval MS    how often to look for new captures (default 500)
${clientHelp}`;

/** A capture summary (GET …/captures?summary=true); a server that ignores `summary` sends `trigger`. */
interface Capture {
  id: string;
  receivedAt: string;
  size?: number;
  truncated?: boolean;
  method?: string;
  path?: string;
  preview?: string;
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
    { ...serverFlag, off: { type: 'boolean' }, 'no-follow': { type: 'boolean' }, show: { type: 'boolean' }, interval: { type: 'string' } },
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
    // What was captured before this session is not news: only what comes after the newest one.
    const [newest] = await captures(client, name, undefined, 1);
    const seen = new Set(newest ? [newest.id] : []);
    const from = { after: newest?.id };
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
      await follow(client, name, { seen, from, show: !!values.show }, intervalMs, stop, saveHint);
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
  state: { seen: Set<string>; from: { after?: string }; show: boolean },
  intervalMs: number,
  stop: StopSignal,
  saveHint: (id: string) => string,
): Promise<void> {
  const { seen, from } = state;
  let unreachable = false;
  while (!stop.stopped) {
    try {
      const list = await captures(client, name, from.after, PAGE);
      if (unreachable) process.stderr.write('server reachable again\n');
      unreachable = false;
      if (list[0]) from.after = list[0].id;
      const fresh = list.filter((c) => !seen.has(c.id)).reverse();
      if (fresh.length === PAGE && seen.size > 0) process.stderr.write(`more than ${PAGE} requests within ${intervalMs} ms: some were not shown\n`);
      for (const c of fresh) {
        seen.add(c.id);
        process.stdout.write(`${describeCapture(c)}\n  save it: ${saveHint(c.id)}\n`);
        if (state.show) {
          const full = await client.call<{ trigger: unknown }>('GET', `/integrations/${enc(name)}/captures/${enc(c.id)}`);
          process.stdout.write(`${JSON.stringify(full.trigger, null, 2)}\n`);
        }
      }
    } catch (err) {
      if (!(err instanceof AdminError) || err.status === 401 || err.status === 404) throw err;
      if (!unreachable) process.stderr.write(`hcm-runner: ${err.message}; retrying\n`);
      unreachable = true;
    }
    await stop.wait(intervalMs);
  }
}

/** Summaries, newest first (after capture `after` when given). */
function captures(client: AdminClient, name: string, after: string | undefined, limit: number): Promise<Capture[]> {
  return client.call<Capture[]>('GET', `/integrations/${enc(name)}/captures?summary=true&limit=${limit}${after ? `&after=${enc(after)}` : ''}`);
}

/** `3f2c…  POST /orders?x=1  17:45:01  38 B  {"workerId":"Employee_ID=21001"}` */
export function describeCapture(c: Capture): string {
  const t = c.trigger ?? {};
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(t.queryParameters ?? {})) for (const one of Array.isArray(v) ? v : [v]) query.append(k, one);
  const path = c.path ?? `/${t.pathFragment ?? ''}${query.size ? `?${query}` : ''}`;
  const time = new Date(c.receivedAt);
  const shownTime = Number.isNaN(time.getTime()) ? c.receivedAt : time.toTimeString().slice(0, 8);
  const size = c.size === undefined ? '' : `  ${c.size} B${c.truncated ? ' (stored cut)' : ''}`;
  return `${c.id}  ${c.method ?? t.method ?? '?'} ${path}  ${shownTime}${size}  ${bodyPreview(c.preview, t)}`;
}

function bodyPreview(summary: string | undefined, t: NonNullable<Capture['trigger']>): string {
  const text = summary ?? (t.body ? (JSON.stringify(t.body.data) ?? '') : t.rawBody ? t.rawBody.data : '');
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
