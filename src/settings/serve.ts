/**
 * What `serve` reads: every setting of the spec (the CLI's debug switch aside), plus the rules
 * that relate two settings. `--help` and the docs table are rendered from the same spec (help.ts,
 * docs.ts).
 */
import { resolveAllSettings, SettingError, type SettingSources } from './resolve.js';
import { type SettingKey, type Settings, settingKeys, specOf } from './spec.js';

/** The settings `serve` takes, in spec order. */
export const serveSettingKeys: readonly SettingKey[] = settingKeys.filter((k) => !specOf(k).notServe);

/** Every setting, checked against each other as `serve` needs them. */
export function resolveServeSettings(sources: SettingSources): Settings {
  const s = resolveAllSettings(sources);
  if (s.adminPort !== undefined && s.adminPort !== 0 && s.adminPort === s.port)
    throw new SettingError(`--admin-port must differ from --port (both ${s.port}): the console and the public edge never share an origin`);
  if (s.adminHost !== undefined && s.adminPort === undefined) throw new SettingError('--admin-host needs --admin-port (or HCM_RUNNER_ADMIN_PORT)');
  return s;
}
