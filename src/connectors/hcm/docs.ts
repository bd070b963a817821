/** Generates docs/connectors/hcm.md from the declarations (`npm run docs`; a test keeps it fresh). */
import { writeFile } from 'node:fs/promises';
import type { InputDecl } from '../types.js';
import { findConnectionType } from '../catalog.js';
import { hcmActions, hcmConnectionType } from './declarations/index.js';
import { hcmServicePrefixes, type HcmService } from './declarations/types.js';

const SERVICE_TITLES: Record<HcmService, string> = {
  staffing: 'Staffing',
  common: 'Common',
  timeTracking: 'Time tracking',
  absenceManagement: 'Absence management',
  person: 'Person',
  accountsPayable: 'Accounts payable',
  businessProcess: 'Business process',
  connect: 'Connect',
  customerAccounts: 'Customer accounts',
  prismAnalytics: 'Analytics',
  raw: 'Raw Request',
};

/** Which service to pick where two offer the same kind of action (docs/authoring.md §11). */
const SERVICE_NOTES: Partial<Record<HcmService, string>> = {
  staffing:
    'Workers as the system of record for employment data (job, title, organization, manager): use these to look workers up and to change employment data. ' +
    '`workerId` takes the opaque id or a reference id such as `Employee_ID=21001`.',
  timeTracking:
    'The same workers as seen by time tracking (same shape): use `hcm.listWorkers` / `hcm.getWorkerById` alongside time clock events and time blocks; for plain lookups prefer the staffing actions.',
};

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function describeInput(name: string, d: InputDecl): string {
  const bits: string[] = [];
  if (d.required) bits.push('required');
  if (d.default !== undefined) bits.push(`default ${JSON.stringify(d.default)}`);
  if (d.enum) bits.push(`one of ${d.enum.map((e) => JSON.stringify(e)).join('/')}`);
  if (d.minimum !== undefined && d.maximum !== undefined) bits.push(`${d.minimum}–${d.maximum}`);
  else if (d.minimum !== undefined) bits.push(`≥ ${d.minimum}`);
  else if (d.maximum !== undefined) bits.push(`≤ ${d.maximum}`);
  return `\`${name}\` (${d.type}${bits.length ? `, ${bits.join(', ')}` : ''})`;
}

function bodyNote(a: (typeof hcmActions)[number]): string {
  const r = a.request;
  if (r.raw) return 'method, URL, query, headers and body (JSON or multipart) from the inputs';
  const parts: string[] = [];
  if (r.paged) parts.push('paged (`limit`/`offset`, `fetchAll`)');
  if (r.queryParams) parts.push('`queryParams` → query string');
  if (r.body)
    parts.push(
      `body: ${Object.entries(r.body)
        .map(([i, f]) => (i === f ? `\`${f}\`` : `\`${f}\`←${i}`))
        .join(', ')}`,
    );
  if (r.additionalFields) parts.push('`additionalFields` merged last');
  if (r.multipart)
    parts.push(
      `multipart part ${Object.values(r.multipart)
        .map((p) => `\`${p}\``)
        .join(', ')}`,
    );
  if (r.binary) parts.push('binary result');
  return parts.join('; ');
}

export function renderHcmDocs(): string {
  const out: string[] = [
    '# HCM connector',
    '',
    '<!-- Generated from src/connectors/hcm/declarations by `npm run docs`; do not edit by hand. -->',
    '',
    `${hcmActions.length} actions, keys \`hcm.<key>\`, each needing a connection of type \`${hcmConnectionType.type}\`. ` +
      "Paths are relative to the connection's API URL. Results are the parsed response body (`{data, total}` for lists; " +
      'binary responses as `{contentType, size, base64, filename?}`). Empty optional inputs are omitted; `date` inputs are sent as ISO-8601; ' +
      'key/value inputs accept a map or a list of `{key, value}`.',
    '',
    `## Connection \`${hcmConnectionType.type}\``,
    '',
    cell(hcmConnectionType.description),
    '',
    '| Input | Label | Type | Required | Default | Notes |',
    '|---|---|---|---|---|---|',
  ];
  // As the catalog has it: the type's own keys and those every connection has (its limits).
  for (const [name, d] of Object.entries(findConnectionType(hcmConnectionType.type)!.inputs)) {
    out.push(
      `| \`${name}\` | ${d.label ?? ''} | ${d.type} | ${d.required ? 'yes' : 'no'} | ${d.default === undefined ? '' : `\`${JSON.stringify(d.default)}\``} | ${cell([d.enum ? `one of ${d.enum.join(', ')}` : '', d.description ?? ''].filter(Boolean).join('; '))} |`,
    );
  }
  out.push(
    '',
    'Tokens are stored encrypted, one set per API client (token URL + client ID), shared by every integration that uses it; authorize once with `hcm-runner connect <integration> <connection>`.',
    '',
  );
  for (const service of Object.keys(hcmServicePrefixes) as HcmService[]) {
    const actions = hcmActions.filter((a) => a.request.service === service);
    if (!actions.length) continue;
    out.push(`## ${SERVICE_TITLES[service]}${hcmServicePrefixes[service] ? ` (\`${hcmServicePrefixes[service]}\`)` : ''}`, '');
    if (SERVICE_NOTES[service]) out.push(SERVICE_NOTES[service], '');
    out.push('| Action | Name | Method | Path | Inputs | Wire | Results |', '|---|---|---|---|---|---|---|');
    for (const a of actions) {
      const inputs = Object.entries(a.inputs)
        .map(([n, d]) => describeInput(n, d))
        .join('<br>');
      out.push(
        `| \`${a.key}\` | ${cell(a.name)} | ${a.docs?.method ?? ''} | \`${a.docs?.path ?? ''}\` | ${cell(inputs)} | ${cell(bodyNote(a))} | ${cell(a.output?.description ?? '')} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

export async function writeHcmDocs(path: string): Promise<void> {
  await writeFile(path, renderHcmDocs(), 'utf8');
}
