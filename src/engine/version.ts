/** The version of an integration file an execution runs on (ExecutionRecord.version). */
import type { CompiledIntegration } from '../definition/types.js';
import type { ExecutionVersion } from './record.js';

export function versionOf(integration: CompiledIntegration): ExecutionVersion {
  return integration.commit ? { sha256: integration.hash, commit: integration.commit } : { sha256: integration.hash };
}
