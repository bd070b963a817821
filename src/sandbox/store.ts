import { notFound } from './http.js';
import type { Rng } from './rng.js';

/** A stored record; keys starting with `_` are internal (e.g. `_owner`) and never sent. */
export type Rec = { id: string; [key: string]: any };

export function view(rec: Rec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) if (!k.startsWith('_')) out[k] = v;
  return out;
}

/** An in-memory keyed collection with id aliases (e.g. `Employee_ID=21001`). */
export class Collection {
  private items = new Map<string, Rec>();
  private aliases = new Map<string, string>();
  constructor(
    public readonly what: string,
    private readonly rng: Rng,
  ) {}

  newId(): string {
    let id = this.rng.hex(32);
    while (this.items.has(id)) id = this.rng.hex(32);
    return id;
  }
  insert(rec: Rec, aliases: string[] = []): Rec {
    this.items.set(rec.id, rec);
    for (const a of aliases) this.aliases.set(a, rec.id);
    return rec;
  }
  get(id: string): Rec | undefined {
    return this.items.get(id) ?? this.items.get(this.aliases.get(id) ?? '\0');
  }
  require(id: string): Rec {
    const r = this.get(id);
    if (!r) throw notFound(this.what, id);
    return r;
  }
  all(): Rec[] {
    return [...this.items.values()];
  }
  ownedBy(ownerId: string): Rec[] {
    return this.all().filter((r) => r._owner === ownerId);
  }
  create(data: Record<string, any>, extra: Record<string, any> = {}): Rec {
    const { id: _ignored, ...rest } = data;
    const rec: Rec = { id: this.newId(), ...rest, ...extra };
    return this.insert(rec);
  }
  update(id: string, patch: Record<string, any>): Rec {
    const rec = this.require(id);
    for (const [k, v] of Object.entries(patch)) if (k !== 'id' && !k.startsWith('_')) rec[k] = v;
    return rec;
  }
  remove(id: string): void {
    const rec = this.require(id);
    this.items.delete(rec.id);
    for (const [a, target] of this.aliases) if (target === rec.id) this.aliases.delete(a);
  }
  get size(): number {
    return this.items.size;
  }
}

export const RESOURCES = [
  'workers',
  'people',
  'organizations',
  'customers',
  'serviceDates',
  'skills',
  'jobChanges',
  'orgAssignmentChanges',
  'businessTitleChanges',
  'commonJobChanges',
  'timeClockEvents',
  'timeBlocks',
  'balances',
  'timeOffDetails',
  'timeOffRequests',
  'events',
  'eventAttachments',
  'supplierInvoiceRequests',
  'sirAttachments',
  'messageTemplates',
  'messages',
  'invoices',
  'payments',
  'tables',
  'dataChanges',
  'fileContainers',
  'files',
] as const;
export type ResourceName = (typeof RESOURCES)[number];

export interface Lookups {
  jobChangeReasons: Array<{ id: string; descriptor: string }>;
}

export interface Db extends Record<ResourceName, Collection> {
  lookups: Lookups;
  rng: Rng;
}

export function createDb(rng: Rng): Db {
  const labels: Record<ResourceName, string> = {
    workers: 'worker',
    people: 'person',
    organizations: 'organization',
    customers: 'customer',
    serviceDates: 'service date',
    skills: 'skill',
    jobChanges: 'job change',
    orgAssignmentChanges: 'organization assignment change',
    businessTitleChanges: 'business title change',
    commonJobChanges: 'job change',
    timeClockEvents: 'time clock event',
    timeBlocks: 'worker time block',
    balances: 'time off balance',
    timeOffDetails: 'time off detail',
    timeOffRequests: 'time off request',
    events: 'event',
    eventAttachments: 'event attachment',
    supplierInvoiceRequests: 'supplier invoice request',
    sirAttachments: 'attachment',
    messageTemplates: 'message template',
    messages: 'message',
    invoices: 'invoice',
    payments: 'payment',
    tables: 'table',
    dataChanges: 'data change',
    fileContainers: 'file container',
    files: 'file',
  };
  const db = { lookups: { jobChangeReasons: [] }, rng } as unknown as Db;
  for (const r of RESOURCES) (db as any)[r] = new Collection(labels[r], rng);
  return db;
}
