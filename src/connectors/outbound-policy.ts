/**
 * Where core.http may connect. A URL can come from a webhook payload, so without a policy any
 * caller could make the runner reach the cloud metadata service or internal services.
 *
 * - link-local (169.254.0.0/16, fe80::/10) and cloud metadata addresses and names: always refused;
 * - private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) and loopback (127/8, ::1, 0.0.0.0):
 *   refused unless the server allows them (`serve --allow-private-network`, on with `--sandbox`).
 *
 * The check runs when the socket connects, on the address actually dialled: host names are
 * resolved by our own `lookup`, which drops refused addresses, so a name that resolves to a public
 * address once and to 127.0.0.1 later (DNS rebinding) gains nothing. IPv4-mapped and NAT64 IPv6
 * forms are judged as the IPv4 address they carry. HCM connections do not go through here: their
 * API URL is the operator's configuration.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';

export type AddressClass = 'metadata' | 'link-local' | 'loopback' | 'private' | 'public';

/** Names of cloud metadata services (they resolve to link-local addresses where they exist). */
const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);
/** Metadata services reachable on addresses outside the link-local ranges. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);

function blockList(v4: Array<[string, number]>, v6: Array<[string, number]>): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const LINK_LOCAL = blockList([['169.254.0.0', 16]], [['fe80::', 10]]);
const LOOPBACK = blockList(
  [
    ['127.0.0.0', 8],
    ['0.0.0.0', 8], // "this host": connecting to 0.0.0.0 reaches the local machine
  ],
  [
    ['::1', 128],
    ['::', 128],
  ],
);
const PRIVATE = blockList(
  [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['100.64.0.0', 10], // carrier-grade NAT, used inside clouds
    ['192.0.0.0', 24], // IETF protocol assignments
    ['198.18.0.0', 15], // benchmarking networks
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ],
  [
    ['fc00::', 7], // unique local
    ['fec0::', 10], // deprecated site-local
    ['ff00::', 8], // multicast
  ],
);

/** The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`), if any. */
export function embeddedIpv4(ipv6: string): string | undefined {
  // The URL parser gives the canonical form: lower case, compressed, the IPv4 part in hex.
  let canonical: string;
  try {
    canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const m = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!m) return undefined;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** What kind of address `ip` (an IPv4 or IPv6 literal) is. */
export function classifyAddress(ip: string): AddressClass {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare);
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) return classifyAddress(v4);
  }
  if (family === 0) return 'public'; // not an address: names are judged by what they resolve to
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const normalized = family === 6 ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
  if (METADATA_ADDRESSES.has(normalized)) return 'metadata';
  if (LINK_LOCAL.check(bare, type)) return 'link-local';
  if (LOOPBACK.check(bare, type)) return 'loopback';
  if (PRIVATE.check(bare, type)) return 'private';
  return 'public';
}

export const ALLOW_FLAG_HINT = 'start serve (or run) with --allow-private-network, or set HCM_RUNNER_ALLOW_PRIVATE_NETWORK=1 (--sandbox turns it on)';

/** Why connecting to `ip` is refused under this setting, or undefined when it is allowed. */
export function refusalReason(ip: string, allowPrivateNetwork: boolean): string | undefined {
  const kind = classifyAddress(ip);
  const v4 = isIP(ip) === 6 ? embeddedIpv4(ip) : undefined;
  const shown = v4 ? `${ip} (IPv4 ${v4})` : ip;
  if (kind === 'metadata') return `${shown} is a cloud metadata address; core.http never connects to it`;
  if (kind === 'link-local') return `${shown} is a link-local address; core.http never connects to link-local addresses`;
  if ((kind === 'loopback' || kind === 'private') && !allowPrivateNetwork) {
    return `${shown} is a ${kind} address; core.http connects to private and loopback addresses only when the server allows it: ${ALLOW_FLAG_HINT}`;
  }
  return undefined;
}

/** A connection the policy refused. core.http turns it into a step error that is not retried. */
export class OutboundRefusedError extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
  constructor(
    readonly host: string,
    reason: string,
  ) {
    // The reason names the address; the host is added when it was a name.
    super(isIP(host) ? `refused to connect: ${reason}` : `refused to connect to ${host}: ${reason}`);
    this.name = 'OutboundRefusedError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** `dns.lookup` that drops refused addresses; fails with OutboundRefusedError when none is left. */
function policyLookup(allowPrivateNetwork: boolean) {
  return (hostname: string, options: (Omit<LookupAllOptions, 'all'> & { all?: boolean }) | undefined, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) return callback(err, options?.all ? [] : '');
      const allowed = addresses.filter((a) => refusalReason(a.address, allowPrivateNetwork) === undefined);
      if (allowed.length === 0) {
        const first = addresses[0]?.address ?? hostname;
        return callback(new OutboundRefusedError(hostname, refusalReason(first, allowPrivateNetwork) ?? 'it has no address'), options?.all ? [] : '');
      }
      if (options?.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/**
 * Judged before connecting, for what needs no DNS: literal addresses (never looked up) and the
 * names of metadata services (refused without even asking DNS). Other names → undefined: their
 * addresses are judged by the lookup.
 */
export function hostRefusal(hostname: string, allowPrivateNetwork: boolean): string | undefined {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const name = host.toLowerCase().replace(/\.$/, '');
  if (METADATA_HOSTS.has(name)) return `${name} is a cloud metadata service; core.http never connects to it`;
  return isIP(host) ? refusalReason(host, allowPrivateNetwork) : undefined;
}

/** A connection pool that dials only what the policy allows; core.http's dispatcher is the HTTP stack composed on it (http/stack.ts). */
export function outboundAgent(allowPrivateNetwork: boolean): Agent {
  const connect = buildConnector({ lookup: policyLookup(allowPrivateNetwork) as never });
  return new Agent({
    connect(opts, callback) {
      const reason = hostRefusal(opts.hostname, allowPrivateNetwork);
      if (reason) {
        const host = opts.hostname.replace(/^\[(.*)\]$/, '$1');
        callback(new OutboundRefusedError(host, reason), null);
        return;
      }
      connect(opts, callback);
    },
  });
}

/** The policy's refusal inside whatever error undici wraps it in, if that is why a call failed. */
export function outboundRefusal(err: unknown): OutboundRefusedError | undefined {
  for (let e = err as { cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof OutboundRefusedError) return e;
  }
  return undefined;
}
