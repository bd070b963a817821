import type { Hono } from 'hono';
import type { SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { absenceRoutes } from './absence.js';
import { accountsPayableRoutes } from './accountsPayable.js';
import { businessProcessRoutes } from './businessProcess.js';
import { commonRoutes } from './common.js';
import { connectRoutes } from './connect.js';
import { customerAccountsRoutes } from './customerAccounts.js';
import { personRoutes } from './person.js';
import { prismAnalyticsRoutes } from './prismAnalytics.js';
import { staffingRoutes } from './staffing.js';
import { timeTrackingRoutes } from './timeTracking.js';

/** Register every HCM API endpoint (docs/connectors/hcm.md) under /ccx. */
export function registerApiRoutes(app: Hono<SandboxEnv>, db: Db): void {
  for (const register of [
    staffingRoutes,
    commonRoutes,
    timeTrackingRoutes,
    absenceRoutes,
    personRoutes,
    accountsPayableRoutes,
    businessProcessRoutes,
    connectRoutes,
    customerAccountsRoutes,
    prismAnalyticsRoutes,
  ])
    register(app, db);
}
