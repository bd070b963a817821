/**
 * The console's only script, served as is at /console/assets/console.js (a plain ES module: no
 * bundler, no CDN, no build step). It lives in a TypeScript module so that the compiled runner
 * (dist/) carries it; keep it free of backticks, `${` and backslashes (it sits in a template
 * literal).
 */
export const consoleScript = `// The console's only script (a plain ES module, served as is). Pages are rendered on the server;
// this adds: editors that open and close, copy buttons, and live sections that are re-read from
// the server whenever a server-sent event says something changed.

// Editors: a button with data-opens="ID" shows #ID and hides itself; data-closes="ID" undoes it.
document.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target.closest('button') : null;
  if (!target) return;
  if (target.dataset.opens) {
    const panel = document.getElementById(target.dataset.opens);
    if (!panel) return;
    panel.hidden = false;
    target.hidden = true;
    panel.querySelector('textarea, input:not([type=hidden])')?.focus();
  } else if (target.dataset.closes) {
    const panel = document.getElementById(target.dataset.closes);
    if (panel) panel.hidden = true;
    for (const opener of document.querySelectorAll('[data-opens="' + CSS.escape(target.dataset.closes) + '"]')) opener.hidden = false;
  } else if (target.dataset.copy !== undefined) {
    void copy(target.dataset.copy, target);
  }
});

// Filters apply as soon as a choice changes (the Filter button stays for keyboards and no-script).
document.addEventListener('change', (event) => {
  const select = event.target instanceof HTMLSelectElement ? event.target : null;
  if (select && select.form && select.form.classList.contains('filters')) select.form.requestSubmit();
});

// A form with data-confirm="QUESTION" (a bulk action) is sent only once the question is answered yes.
document.addEventListener('submit', (event) => {
  const form = event.target instanceof HTMLFormElement ? event.target : null;
  if (form && form.dataset.confirm && !confirm(form.dataset.confirm)) event.preventDefault();
});

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Not a secure context (plain http on a remote host): the old way still works.
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  const label = button.textContent;
  button.textContent = 'Copied';
  setTimeout(() => (button.textContent = label), 1500);
}

// A page that answered a form post (e.g. the Run editor's error, at .../run) names its own URL:
// show that one, so that reading the page again (live updates, a reload) finds it.
const canonical = document.querySelector('link[rel=canonical]')?.getAttribute('href');
if (canonical && canonical !== location.pathname + location.search) history.replaceState(null, '', canonical + location.hash);

// Live sections --------------------------------------------------------------------------------
// <div hidden data-live-events=URL data-live-refresh="id1 id2" [data-live-execution=ID]
// [data-live-source=URL]>: on each event from URL (and once when the stream opens, so nothing
// between page load and subscription is missed) the elements with those ids are replaced by their
// current version from the server: from the source URL when given (a route rendering only them),
// else from the page itself.
const MIN_REFRESH_GAP_MS = 250;
for (const spec of document.querySelectorAll('[data-live-events]')) live(spec);

function live(spec) {
  const ids = spec.dataset.liveRefresh.split(' ').filter(Boolean);
  const only = spec.dataset.liveExecution;
  const source = new EventSource(spec.dataset.liveEvents);
  let running = false;
  let again = false;

  const refresh = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const started = Date.now();
        const res = await fetch(spec.dataset.liveSource || location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
        if (!res.ok) return;
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        for (const id of ids) replace(id, doc);
        // The new page no longer wants this stream (e.g. the execution finished): close it.
        const stillLive = spec.dataset.liveSource || [...doc.querySelectorAll('[data-live-events]')].some((s) => s.dataset.liveEvents === spec.dataset.liveEvents);
        if (!stillLive) source.close();
        // A burst of events (a busy runner) re-reads the page at most about four times a second.
        if (again) await new Promise((resolve) => setTimeout(resolve, Math.max(0, MIN_REFRESH_GAP_MS - (Date.now() - started))));
      } while (again);
    } finally {
      running = false;
    }
  };

  const replace = (id, doc) => {
    const current = document.getElementById(id);
    const fresh = doc.getElementById(id);
    if (!current || !fresh) return;
    // Never pull a form away from someone typing in it: wait until they leave it.
    if (current.contains(document.activeElement) && document.activeElement !== document.body) {
      current.addEventListener('focusout', () => void refresh(), { once: true });
      return;
    }
    current.replaceWith(document.importNode(fresh, true));
  };

  source.addEventListener('ready', () => {
    document.documentElement.dataset.live = 'open';
    void refresh();
  });
  source.addEventListener('capture', () => void refresh());
  source.addEventListener('execution', (event) => {
    if (only && JSON.parse(event.data).id !== only) return;
    void refresh();
  });
}
`;
