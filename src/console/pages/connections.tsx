/** OAuth connections: what each needs, and Connect to start the authorization-code flow. */
import type { ConnectionView } from '../../server/operations.js';
import { Badge, Layout, Notice, PostButton, Time } from './layout.js';

export function ConnectionsPage(props: { connections: ConnectionView[]; callbackUrl: string; error?: string }) {
  return (
    <Layout title="Connections" section="connections">
      <h1>Connections</h1>
      <Notice error={props.error} />
      <p class="muted">
        OAuth connections (<code>hcm-oauth2</code>) of the loaded integrations. Connect opens the provider's authorization page; it sends you back to{' '}
        <code>{props.callbackUrl}</code>, which must be registered as the API client's redirect URL. Integrations naming the same token URL and client
        share one authorization.
      </p>
      {props.connections.length === 0 ? (
        <p class="muted">No integration uses an OAuth connection.</p>
      ) : (
        <div class="table-wrap">
          <table aria-label="Connections">
            <thead>
              <tr>
                <th scope="col">Integration</th>
                <th scope="col">Connection</th>
                <th scope="col">State</th>
                <th scope="col">Access token expires at</th>
                <th scope="col">Authorize</th>
              </tr>
            </thead>
            <tbody>
              {props.connections.map((c) => (
                <tr>
                  <td>
                    <a href={`/console/integrations/${encodeURIComponent(c.integration)}`}>{c.integration}</a>
                  </td>
                  <td class="mono">{c.connection}</td>
                  <td class="wrap">
                    {c.error ? (
                      <>
                        <Badge status="error" /> {c.error}
                      </>
                    ) : (
                      <>
                        <Badge status={c.state === 'authorized' ? 'authorized' : 'needsauthorization'} label={c.state} />
                        {c.refreshToken === 'configured' && <span class="muted"> (refresh token from configuration)</span>}
                        {c.reason && (
                          <span class="muted">
                            {' '}
                            — the token endpoint refused the grant at <Time iso={c.refusedAt} /> ({c.reason}). Connect to authorize it again.
                          </span>
                        )}
                      </>
                    )}
                  </td>
                  <td>
                    <Time iso={c.expiresAt} />
                  </td>
                  <td>
                    <PostButton action={`/console/connections/${encodeURIComponent(c.integration)}/${encodeURIComponent(c.connection)}/connect`}>
                      Connect
                    </PostButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Layout>
  );
}
