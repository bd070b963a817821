/** One captured request in full (as stored): the integration's page lists only summaries. */
import type { Capture } from '../../store/types.js';
import { formatBytes, formatJson, shortId } from '../format.js';
import { SaveCapture } from './integration.js';
import { Layout, Time } from './layout.js';

/** Characters of a capture's JSON shown (the stored capture is bounded; this bounds the page too). */
const CAPTURE_DISPLAY_LIMIT = 512 * 1024;

export function CapturePage(props: { integration: string; capture: Capture }) {
  const { capture: c, integration } = props;
  const base = `/console/integrations/${encodeURIComponent(integration)}`;
  return (
    <Layout title={`Capture ${shortId(c.id)} · ${integration}`} section="integrations">
      <p class="crumbs">
        <a href="/console/">Integrations</a> / <a href={base}>{integration}</a> /
      </p>
      <h1>Captured request</h1>
      <dl class="facts">
        <dt>Capture</dt>
        <dd class="mono">{c.id}</dd>
        <dt>Received</dt>
        <dd>
          <Time iso={c.receivedAt} />
        </dd>
        <dt>Size</dt>
        <dd>
          {formatBytes(c.size ?? 0)}
          {c.truncated && <span class="muted"> — stored cut: the body below is a preview (HCM_RUNNER_CAPTURE_MAX_BYTES)</span>}
        </dd>
      </dl>
      {!c.truncated && <SaveCapture base={base} capture={c} />}
      <h2>Trigger data</h2>
      <pre>{formatJson(c.trigger, CAPTURE_DISPLAY_LIMIT)}</pre>
    </Layout>
  );
}
