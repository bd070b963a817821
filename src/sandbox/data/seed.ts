import { API_BASE } from '../http.js';
import { Rng } from '../rng.js';
import { createDb, type Db, type Rec } from '../store.js';
import * as N from './names.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const dateOnly = (ms: number) => iso(ms).slice(0, 10);
const money = (n: number) => n.toFixed(2);
const ref = (id: string, descriptor: string, path?: string) => ({ id, descriptor, ...(path ? { href: `${API_BASE}${path}` } : {}) });
const T0 = Date.UTC(2024, 0, 1);

/** Build the deterministic sandbox data set for a seed. */
export function seedDb(seed = 1): Db {
  const rng = new Rng(seed);
  const db = createDb(rng);
  const hex = () => rng.hex(32);

  const orgs = Array.from({ length: 40 }, (_, i) => {
    const name = `${N.DEPARTMENTS[i % N.DEPARTMENTS.length]} - ${N.REGIONS[Math.floor(i / N.DEPARTMENTS.length) % N.REGIONS.length]}`;
    const id = hex();
    const code = `SUP_ORG_${String(i + 1).padStart(3, '0')}`;
    return db.organizations.insert(
      {
        id,
        descriptor: name,
        href: `${API_BASE}/api/common/v1/organizations/${id}`,
        name,
        code,
        organizationType: { id: hex(), descriptor: i % 5 === 4 ? 'Cost Center' : 'Supervisory' },
        isActive: true,
      },
      [`Organization_Reference_ID=${code}`],
    );
  });
  const profiles = N.JOB_PROFILES.map((p) => ref(hex(), p));
  const locations = N.LOCATIONS.map((l) => ref(hex(), l));
  const companies = N.COMPANIES.map((c) => ref(hex(), c));
  const currencies = ['USD', 'GBP', 'EUR'].map((c) => ({ id: c, descriptor: c }));
  db.lookups.jobChangeReasons = [
    'Promotion',
    'Lateral Move',
    'Demotion',
    'Transfer',
    'Reorganization',
    'Change in Hours',
    'Location Change',
    'Data Change',
  ].map((r) => ({ id: hex(), descriptor: `Job Change > ${r}` }));

  const workers: Rec[] = [];
  for (let i = 0; i < 300; i++) {
    const first = rng.pick(N.FIRST);
    const last = rng.pick(N.LAST);
    const name = `${first} ${last}`;
    const contingent = rng.chance(0.1);
    const workerId = contingent ? `C${String(5001 + i)}` : String(21001 + i);
    const id = hex();
    const personId = hex();
    const email = `${first}.${last}${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, '');
    const phone = `+1 (415) 555-${String(1000 + i).slice(-4)}`;
    const profile = rng.pick(profiles);
    const org = rng.pick(orgs);
    const hire = T0 - rng.int(30, 4000) * DAY;
    const job = { id: hex(), descriptor: `${profile.descriptor} - ${name}` };
    const w = db.workers.insert(
      {
        id,
        descriptor: name,
        href: `${API_BASE}/staffing/v7/workers/${id}`,
        workerId,
        workerType: contingent
          ? { id: 'b1a0c0e8d0b74d05a4e6b1c2d3e4f5a6', descriptor: 'Contingent Worker' }
          : { id: 'a1b0c0e8d0b74d05a4e6b1c2d3e4f5a6', descriptor: 'Employee' },
        person: { id: personId, email, phone },
        primaryJob: {
          ...job,
          businessTitle: profile.descriptor,
          supervisoryOrganization: ref(org.id, org.descriptor),
          jobProfile: profile,
          location: rng.pick(locations),
        },
        additionalJobs: [],
        isManager: rng.chance(0.15),
        _hireDate: dateOnly(hire),
      },
      [contingent ? `Contingent_Worker_ID=${workerId}` : `Employee_ID=${workerId}`, `WID=${id}`],
    );
    workers.push(w);
    db.people.insert(
      {
        id: personId,
        descriptor: name,
        href: `${API_BASE}/person/v4/people/${personId}`,
        universal_ID: { id: `UID-${String(100000 + i)}` },
        legalName: { firstName: first, lastName: last, fullName: name, country: { id: 'US', descriptor: 'United States of America' } },
        preferredName: { firstName: first, lastName: last, fullName: name },
        workEmails: `${API_BASE}/person/v4/people/${personId}/workEmails`,
        homeEmails: `${API_BASE}/person/v4/people/${personId}/homeEmails`,
        workPhones: `${API_BASE}/person/v4/people/${personId}/workPhones`,
        homeAddresses: `${API_BASE}/person/v4/people/${personId}/homeAddresses`,
        worker: ref(id, name),
      },
      [`Universal_Identifier_ID=UID-${String(100000 + i)}`],
    );
    db.serviceDates.insert({
      id: hex(),
      _owner: id,
      hireDate: dateOnly(hire),
      originalHireDate: dateOnly(hire),
      continuousServiceDate: dateOnly(hire - (rng.chance(0.2) ? rng.int(100, 900) * DAY : 0)),
    });
    const nSkills = rng.int(0, 4);
    for (let s = 0; s < nSkills; s++) {
      const skill = rng.pick(N.SKILLS);
      db.skills.insert({
        id: hex(),
        _owner: id,
        descriptor: skill,
        skillItem: { id: hex(), descriptor: skill },
        skillSources: [
          { id: hex(), descriptor: rng.pick(['Self', 'Manager', 'Certification']), sourceType: rng.pick(['Worker', 'Certification', 'Job Profile']) },
        ],
      });
    }
    if (rng.chance(0.3)) {
      db.businessTitleChanges.insert({
        id: hex(),
        _owner: id,
        descriptor: `Business Title Change: ${name}`,
        proposedBusinessTitle: profile.descriptor,
        currentBusinessTitle: profile.descriptor,
        effective: iso(hire + 30 * DAY),
        status: { id: 'Successfully_Completed', descriptor: 'Successfully Completed' },
      });
    }
    for (const [plan, unit] of [
      ['Vacation', 'Days'],
      ['Sick Leave', 'Hours'],
    ] as const) {
      const bid = hex();
      db.balances.insert({
        id: bid,
        descriptor: `${plan} - ${name}`,
        quantity: String(rng.int(0, 30) + (unit === 'Hours' ? 0.5 : 0)),
        unit: { id: unit, descriptor: unit },
        absencePlan: { id: hex(), descriptor: plan },
        worker: ref(id, name),
        effectiveDate: '2024-06-30',
      });
    }
    if (i < 120) {
      const n = rng.int(1, 5);
      for (let d = 0; d < n; d++) {
        const type = rng.pick(['Vacation', 'Sick', 'Personal', 'Floating Holiday']);
        const status = rng.pick(['Approved', 'Approved', 'Submitted', 'Canceled']);
        db.timeOffDetails.insert({
          id: hex(),
          _owner: id,
          date: dateOnly(T0 + rng.int(0, 240) * DAY),
          quantity: rng.pick(['8', '4', '1']),
          unit: { id: 'Hours', descriptor: 'Hours' },
          comment: rng.pick(['', 'Family event', 'Doctor appointment', 'Trip']),
          timeOffType: { id: hex(), descriptor: type },
          status: { id: status, descriptor: status },
          worker: ref(id, name),
        });
      }
    }
  }

  for (let i = 0; i < 25; i++) {
    const id = hex();
    const name = N.CUSTOMER_NAMES[i]!;
    const code = `CUS-${String(i + 1).padStart(4, '0')}`;
    db.customers.insert({ id, name, descriptor: name, customerId: code, href: `${API_BASE}/api/common/v1/customers/${id}` }, [`Customer_ID=${code}`]);
  }

  const codes = ['Regular', 'Overtime', 'Meal Break', 'Training'].map((c) => ref(hex(), c));
  const projects = ['Apollo', 'Hermes', 'Zephyr', 'Orion'].map((p) => ref(hex(), `Project ${p}`));
  const zones = ['America/Los_Angeles', 'America/New_York', 'Europe/London', 'Asia/Tokyo'];
  for (let i = 0; i < 500; i++) {
    const w = workers[rng.int(0, 79)]!;
    const t = T0 + 120 * DAY + rng.int(0, 60) * DAY + rng.int(7, 18) * 3600_000;
    const id = i % 10 === 0 ? `${rng.hex(8)}$${10000 + i}` : hex();
    db.timeClockEvents.insert(
      {
        id,
        descriptor: `${w.descriptor} - ${iso(t).slice(0, 16)}`,
        dateTime: iso(t),
        timeZone: { id: rng.pick(zones) },
        worker: ref(w.id, w.descriptor),
        timeEntryCode: rng.pick(codes),
        project: rng.pick(projects),
        eventType: { id: rng.chance(0.5) ? 'Check_In' : 'Check_Out' },
        comment: rng.pick(['', 'Forgot badge', 'On site']),
        reference_ID: `TCE-${String(i + 1).padStart(5, '0')}`,
        overrideRate: rng.chance(0.1) ? 45.5 : 0,
      },
      [`Time_Clock_Event_ID=TCE-${String(i + 1).padStart(5, '0')}`],
    );
  }

  const bps = ['Hire', 'Job Change', 'Request Time Off', 'Change Business Title', 'Terminate', 'Propose Compensation'];
  for (let i = 0; i < 200; i++) {
    const w = workers[rng.int(0, 99)]!;
    const bp = rng.pick(bps);
    const created = T0 + rng.int(0, 200) * DAY;
    const done = rng.chance(0.7);
    const id = i % 4 === 0 ? `${rng.int(1000, 9999)}$${rng.int(10000, 99999)}` : hex();
    db.events.insert({
      id,
      descriptor: `${bp}: ${w.descriptor}`,
      href: `${API_BASE}/businessProcess/v1/events/${id}`,
      status: done ? { id: 'Successfully_Completed', descriptor: 'Successfully Completed' } : { id: 'In_Progress', descriptor: 'In Progress' },
      initiator: ref(workers[rng.int(0, 299)]!.id, workers[rng.int(0, 299)]!.descriptor),
      for: ref(w.id, w.descriptor),
      overallBusinessProcess: { id: hex(), descriptor: bp },
      creationDate: iso(created),
      effectiveDate: dateOnly(created + 7 * DAY),
      dueDate: dateOnly(created + 14 * DAY),
      completedDate: done ? iso(created + rng.int(1, 10) * DAY) : null,
      _worker: w.id,
    });
    for (let a = rng.int(0, 3); a > 0; a--) {
      const ext = rng.pick(['pdf', 'docx', 'png']);
      db.eventAttachments.insert({
        id: hex(),
        _owner: id,
        fileName: `${bp.replace(/ /g, '_')}_${a}.${ext}`,
        fileLength: String(rng.int(2_000, 900_000)),
        contentType: {
          id:
            ext === 'pdf'
              ? 'application/pdf'
              : ext === 'png'
                ? 'image/png'
                : 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        },
        uploadDate: iso(created + DAY),
        descriptor: `${bp}_${a}.${ext}`,
      });
    }
  }

  for (let i = 0; i < 60; i++) {
    const id = hex();
    const n = rng.int(1, 4);
    const lines = Array.from({ length: n }, (_, l) => {
      const qty = rng.int(1, 10);
      const cost = rng.int(5, 500);
      return {
        lineOrder: String(l + 1),
        description: rng.pick(['Paper', 'Laptop', 'Desk rental', 'Licenses', 'Courier']),
        quantity: String(qty),
        unitCost: money(cost),
        extendedAmount: money(qty * cost),
      };
    });
    const total = lines.reduce((s, l) => s + Number(l.extendedAmount), 0);
    const tax = Math.round(total * 0.08 * 100) / 100;
    const inv = T0 + rng.int(0, 200) * DAY;
    const st = rng.pick(['Draft', 'Submitted', 'Approved', 'In Progress']);
    const requester = rng.pick(workers);
    db.supplierInvoiceRequests.insert(
      {
        id,
        descriptor: `Supplier Invoice Request: SIR-${10000 + i}`,
        requestNumber: `SIR-${10000 + i}`,
        invoiceDate: dateOnly(inv),
        dueDate: dateOnly(inv + 30 * DAY),
        taxAmount: money(tax),
        controlTotalAmount: money(total + tax),
        memo: rng.pick(['', 'Quarterly order', 'Urgent']),
        currency: rng.pick(currencies),
        status: { id: st.replace(/ /g, '_'), descriptor: st },
        supplier: ref(hex(), rng.pick(N.SUPPLIERS)),
        company: rng.pick(companies),
        requester: ref(requester.id, requester.descriptor),
        suppliersInvoiceNumber: `INV-${rng.int(100000, 999999)}`,
        lines,
      },
      [`Supplier_Invoice_Request_ID=SIR-${10000 + i}`],
    );
    for (let a = rng.int(0, 2); a > 0; a--) {
      db.sirAttachments.insert({
        id: i % 5 === 0 ? `${rng.hex(8)}$${a}` : hex(),
        _owner: id,
        descriptor: `invoice_${10000 + i}_${a}.pdf`,
        fileName: `invoice_${10000 + i}_${a}.pdf`,
        fileLength: String(rng.int(10_000, 400_000)),
        contentType: { id: 'application/pdf' },
      });
    }
  }

  const notif = ['Email', 'Push', 'Email and Push'];
  for (let i = 0; i < 14; i++) {
    const id = hex();
    const name = `${rng.pick(['Welcome', 'Reminder', 'Policy Update', 'Survey', 'Benefits Enrollment', 'Training Due'])} ${i + 1}`;
    const author = rng.pick(workers);
    db.messageTemplates.insert(
      {
        id,
        descriptor: name,
        name,
        referenceID: `MSG_TEMPLATE_${i + 1}`,
        inactive: i % 4 === 3,
        createdBy: ref(author.id, author.descriptor),
        notificationType: { id: hex(), descriptor: rng.pick(notif) },
        emailDetail: { name, subject: `${name} subject`, body: `<p>Hello, this is ${name}.</p>`, replyTo: 'hr@example.com' },
        pushDetail: { message: `${name}: please check your inbox`, redirectURL: 'https://example.com/inbox' },
      },
      [`Message_Template_ID=MSG_TEMPLATE_${i + 1}`],
    );
  }
  // The active welcome template integrations/new-hire-welcome.yaml sends by name. Fixed values,
  // drawn after the random ones, so the rest of the data set stays as it was for every seed.
  const welcomeName = 'New Hire Welcome';
  db.messageTemplates.insert(
    {
      id: '0e1c0a7e5d2b4f6a9c8d7e6f5a4b3c2d',
      descriptor: welcomeName,
      name: welcomeName,
      referenceID: 'NEW_HIRE_WELCOME',
      inactive: false,
      createdBy: ref(workers[0]!.id, workers[0]!.descriptor),
      notificationType: { id: '5e0d1c2b3a494857a6b5c4d3e2f1a0b9', descriptor: 'Email' },
      emailDetail: { name: welcomeName, subject: 'Welcome aboard', body: '<p>Welcome to the team!</p>', replyTo: 'hr@example.com' },
      pushDetail: { message: 'Welcome to the team!', redirectURL: 'https://example.com/inbox' },
    },
    ['Message_Template_ID=NEW_HIRE_WELCOME'],
  );

  const customers = db.customers.all();
  for (let i = 0; i < 80; i++) {
    const id = hex();
    const cust = rng.pick(customers);
    const total = rng.int(500, 50_000);
    const paid = rng.pick([0, total, Math.floor(total / 2)]);
    const d = T0 + rng.int(0, 200) * DAY;
    const status = rng.pick(['Approved', 'Approved', 'Draft', 'Canceled']);
    db.invoices.insert(
      {
        id,
        descriptor: `Customer Invoice: CI-${20000 + i}`,
        invoiceNumber: `CI-${20000 + i}`,
        invoiceDate: dateOnly(d),
        dueDate: dateOnly(d + 30 * DAY),
        totalAmount: { value: money(total), currency: 'USD' },
        dueAmount: { value: money(total - paid), currency: 'USD' },
        billToCustomer: ref(cust.id, cust.descriptor),
        company: rng.pick(companies),
        invoiceStatus: { id: status, descriptor: status },
        paymentStatus:
          paid === 0
            ? { id: 'Unpaid', descriptor: 'Unpaid' }
            : paid === total
              ? { id: 'Paid', descriptor: 'Paid' }
              : { id: 'Partially_Paid', descriptor: 'Partially Paid' },
        invoicePDF: { id, href: `${API_BASE}/customerAccounts/v1/invoicePDFs/${id}` },
      },
      [`Customer_Invoice_ID=CI-${20000 + i}`],
    );
  }
  for (let i = 0; i < 60; i++) {
    const cust = rng.pick(customers);
    db.payments.insert({
      id: hex(),
      descriptor: `Customer Payment: PAY-${30000 + i}`,
      amount: money(rng.int(100, 20_000)),
      date: dateOnly(T0 + rng.int(0, 200) * DAY),
      remitFromCustomer: ref(cust.id, cust.descriptor),
      company: rng.pick(companies),
      readyToAutoApply: rng.chance(0.8),
      memo: rng.pick(['', 'Wire transfer', 'Check #1042']),
      reference: `REF-${rng.int(1000, 9999)}`,
      type: { id: rng.pick(['Check', 'EFT', 'Wire']) },
      transactionNumber: `PAY-${30000 + i}`,
    });
  }

  const tableNames = [
    'Headcount',
    'Attrition',
    'Compensation_Bands',
    'Time_Off_Usage',
    'Supplier_Spend',
    'Invoice_Aging',
    'Skills_Inventory',
    'Recruiting_Funnel',
    'Payroll_Costs',
    'Engagement_Survey',
    'Training_Completion',
    'Project_Hours',
    'Org_Changes',
    'Benefits_Enrollment',
    'Location_Capacity',
  ];
  const types = ['Text', 'Numeric', 'Date', 'Boolean', 'Instance'];
  const tables: Rec[] = tableNames.map((name, i) => {
    const id = hex();
    const created = T0 + i * 7 * DAY;
    return db.tables.insert({
      id,
      name,
      displayName: name.replace(/_/g, ' '),
      description: `${name.replace(/_/g, ' ')} analytics table`,
      documentation: `Source: sandbox seed. Refreshed daily.`,
      enableForAnalysis: i % 3 !== 2,
      tags: i % 2 ? [{ id: hex(), name: 'HR' }] : [{ id: hex(), name: 'Finance' }],
      fields: Array.from({ length: rng.int(3, 7) }, (_, f) => {
        const t = f === 0 ? 'Text' : rng.pick(types);
        return {
          name: f === 0 ? 'ID' : `Field_${f}`,
          displayName: f === 0 ? 'ID' : `Field ${f}`,
          ordinal: f + 1,
          type: { id: `Schema_Field_Type=${t}`, name: t },
          required: f === 0,
          ...(t === 'Numeric' ? { precision: 18, scale: 2 } : {}),
        };
      }),
      createdMoment: iso(created),
      updatedMoment: iso(created + 3 * DAY),
      _restricted: i === 14,
    });
  });
  for (let i = 0; i < 20; i++) {
    const t = tables[i % 14]!;
    const name = `Load_${t.name}_${i + 1}`;
    db.dataChanges.insert({
      id: hex(),
      name,
      displayName: name.replace(/_/g, ' '),
      description: `Loads ${t.displayName}`,
      source: { sourceType: rng.pick(['File Container', 'Dataset', 'Connector']), id: hex(), name: `${t.name}_source` },
      target: { id: t.id, name: t.name },
      operation: { operationType: { id: rng.pick(['Replace', 'Append', 'Upsert']) } },
    });
  }
  for (let i = 0; i < 3; i++) db.fileContainers.insert({ id: hex(), createdMoment: iso(T0 + i * DAY) });
  return db;
}
