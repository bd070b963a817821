/**
 * Every action declaration, by key. Plain data only: the definition layer (validate) reads this
 * without loading any connector's runtime.
 */
import type { ActionDeclaration, ConnectionTypeDecl } from './types.js';
import { coreActions } from './core/declarations.js';
import { connectionLimitInputs } from './connection-limits.js';
import { hcmActions, hcmConnectionType } from './hcm/declarations/index.js';

export const allActions: readonly ActionDeclaration[] = [...coreActions, ...hcmActions];

const byKey = new Map(allActions.map((a) => [a.key, a]));

export function findAction(key: string): ActionDeclaration | undefined {
  return byKey.get(key);
}

export function actionKeys(): string[] {
  return [...byKey.keys()];
}

/**
 * Every connection type, each with the keys every connection has: its outbound limits
 * (connection-limits.ts), which the shared HTTP stack enforces whatever the type.
 */
export const allConnectionTypes: readonly ConnectionTypeDecl[] = [hcmConnectionType].map((c) => ({
  ...c,
  inputs: { ...c.inputs, ...connectionLimitInputs },
}));

const connectionTypes = new Map(allConnectionTypes.map((c) => [c.type, c]));

export function findConnectionType(type: string): ConnectionTypeDecl | undefined {
  return connectionTypes.get(type);
}
