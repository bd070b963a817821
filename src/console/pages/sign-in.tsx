/** The sign-in page: the admin token in a password field. */
import { Layout } from './layout.js';

export function SignInPage(props: { next: string; wrong?: boolean; refused?: string }) {
  return (
    <Layout title="Sign in" signedIn={false}>
      <section class="card sign-in">
        <h1>Sign in</h1>
        <p>
          The console uses the runner's admin token: <code>HCM_RUNNER_ADMIN_TOKEN</code> when it is set, else the one kept in the data directory's{' '}
          <code>admin-token</code> file (<code>data/admin-token</code> with <code>npm start</code>; the server names it when it starts).
        </p>
        {props.wrong && (
          <p class="error" role="alert">
            Wrong admin token. Check HCM_RUNNER_ADMIN_TOKEN (or the token printed at start) and try again.
          </p>
        )}
        {props.refused && (
          <p class="error" role="alert">
            {props.refused}
          </p>
        )}
        <form method="post" action="/console/sign-in">
          <input type="hidden" name="next" value={props.next} />
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
          <button type="submit" class="primary">
            Sign in
          </button>
        </form>
      </section>
    </Layout>
  );
}
