/** The runtime side of the catalog: which connector runs an action key. */
import { coreConnector } from './core/connector.js';
import { hcmConnector } from './hcm/index.js';
import type { Connector } from './types.js';

const connectors = new Map<string, Connector>([coreConnector, hcmConnector].map((c) => [c.prefix, c]));

export function connectorFor(actionKey: string): Connector {
  const prefix = actionKey.slice(0, actionKey.indexOf('.'));
  const c = connectors.get(prefix);
  if (!c) throw new Error(`no connector for "${actionKey}"`);
  return c;
}
