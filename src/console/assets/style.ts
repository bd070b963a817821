/**
 * The console's style sheet, served as is at /console/assets/console.css. In a TypeScript module
 * so that the compiled runner (dist/) carries it; no backticks, `${` or backslashes in it.
 */
export const consoleStyle = `/* The console's style sheet: served as is by the runner. Fits 1280×800 without horizontal scrolling. */
:root {
  --fg: #1d2430;
  --muted: #5d6675;
  --line: #d9dee6;
  --bg: #f6f7f9;
  --card: #ffffff;
  --accent: #2456c7;
  --ok: #1d7a45;
  --ok-bg: #e3f4e9;
  --err: #b42318;
  --err-bg: #fdecea;
  --run: #8a5a00;
  --run-bg: #fff4d6;
  --idle-bg: #eceff3;
  font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
  font-size: 15px;
  color: var(--fg);
  background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a.plain { text-decoration: none; color: inherit; }
code, pre, .mono { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; font-size: 0.9em; }
.muted { color: var(--muted); }
.wrap { overflow-wrap: anywhere; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
[hidden] { display: none !important; }

header.top { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #1d2430; color: #fff; }
header.top .brand { color: #fff; font-weight: 700; text-decoration: none; letter-spacing: 0.02em; }
header.top nav { display: flex; gap: 4px; flex: 1; }
header.top nav a { color: #cfd6e2; text-decoration: none; padding: 6px 10px; border-radius: 6px; }
header.top nav a[aria-current='page'], header.top nav a:hover { background: #34405a; color: #fff; }
header.top .sign-out button { background: transparent; color: #cfd6e2; border-color: #4a5670; }

main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 1.6rem; margin: 8px 0 12px; display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
h2 { font-size: 1.15rem; margin: 28px 0 10px; }
h3 { font-size: 1rem; margin: 18px 0 6px; display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.crumbs { margin: 0; color: var(--muted); font-size: 0.9rem; }
.title-row { display: flex; align-items: center; justify-content: space-between; gap: 16px; }
section { min-width: 0; }

table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef1f5; font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.03em; color: var(--muted); }
tbody tr:last-child td, tbody tr:last-child th { border-bottom: none; }
table.urls th { width: 90px; font-weight: 600; }
table.urls td:last-child { width: 80px; text-align: right; }
.table-wrap { max-width: 100%; }
a.id { font-size: 0.8rem; white-space: nowrap; }

.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.8rem; font-weight: 600; background: var(--idle-bg); color: var(--fg); white-space: nowrap; }
.badge-ok, .badge-succeeded, .badge-authorized { background: var(--ok-bg); color: var(--ok); }
.badge-error, .badge-failed, .badge-needsauthorization { background: var(--err-bg); color: var(--err); }
.badge-running, .badge-queued { background: var(--run-bg); color: var(--run); }
.badge-waiting { background: #e6edfb; color: var(--accent); }
.badge-cancelled { background: var(--idle-bg); color: var(--muted); }
.badge-failing, .badge-stalled { background: var(--err-bg); color: var(--err); }
.health, .last-error, .key { display: block; margin-top: 2px; }
.badge-skipped { background: var(--idle-bg); color: var(--muted); }

ul.problems { margin: 6px 0 0; padding-left: 18px; color: var(--err); }
ul.problems code { color: var(--fg); }

button { font: inherit; padding: 6px 14px; border-radius: 6px; border: 1px solid #b9c1cd; background: #fff; color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:focus-visible, a:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 3px solid #8fb0ff; outline-offset: 1px; }
form.inline { display: inline-flex; align-items: center; gap: 8px; margin: 0; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; }
form.bulk { margin: 0 0 12px; }
dd.copyable { display: flex; align-items: center; gap: 8px; }
td.actions { white-space: nowrap; }
td.actions > * { margin-right: 4px; }
input, select, textarea { font: inherit; padding: 6px 8px; border: 1px solid #b9c1cd; border-radius: 6px; background: #fff; }
textarea { width: 100%; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.9em; }
.editor { display: flex; flex-direction: column; gap: 6px; margin-top: 8px; max-width: 900px; }
.editor label { font-weight: 600; }
.editor .buttons { display: flex; gap: 8px; }
.filters { display: flex; align-items: center; gap: 8px; margin-bottom: 12px; flex-wrap: wrap; }

.notice { background: var(--ok-bg); color: var(--ok); padding: 8px 12px; border-radius: 6px; }
.error { color: var(--err); }
p.error { background: var(--err-bg); padding: 8px 12px; border-radius: 6px; overflow-wrap: anywhere; }

.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 24px; }
@media (max-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr); } }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 0 0 12px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
dl.facts.wide { grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr); background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }

pre { background: #10151f; color: #e5e9f0; padding: 10px 12px; border-radius: 6px; overflow: auto; max-height: 360px; margin: 6px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
details summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; }

table.timeline { table-layout: fixed; }
table.timeline col.c-step { width: 22%; }
table.timeline col.c-action { width: 20%; }
table.timeline col.c-status { width: 10%; }
table.timeline col.c-duration { width: 9%; }
table.timeline col.c-bar { width: 39%; }
/* Nested tables span the whole row (so their bars share the top table's axis); nesting is the indent of the first cell. */
table.timeline tr.nest > td { padding: 0; }
table.timeline.nested { border: none; border-radius: 0; border-top: 1px solid var(--line); }
table.timeline tr.inner td { padding-top: 5px; padding-bottom: 5px; font-size: 0.93em; }
table.timeline tr.inner td:first-child { border-left: 3px solid #c9d3e3; }
table.timeline tr.row-error td { padding-top: 0; }
.case { font-size: 0.85rem; background: #e8eefc; color: var(--accent); padding: 1px 6px; border-radius: 4px; white-space: nowrap; }
.children { font-size: 0.85rem; }
.iterations { border-top: 1px solid var(--line); list-style: none; margin: 0; padding: 0; }
.iterations > li + li { border-top: 1px solid var(--line); }
summary.iteration-row { display: grid; grid-template-columns: 22% 20% 10% 9% 39%; align-items: center; color: var(--fg); list-style: none; }
summary.iteration-row::-webkit-details-marker { display: none; }
summary.iteration-row > span { padding: 5px 10px; min-width: 0; }
summary.iteration-row > span:first-child::before { content: '▸ '; color: var(--accent); }
details[open] > summary.iteration-row > span:first-child::before { content: '▾ '; }
summary.iteration-row:hover { background: #f3f6fb; }
.not-drawn { margin: 0; padding: 6px 10px; font-size: 0.9rem; }
.track { position: relative; height: 14px; background: #eef1f5; border-radius: 4px; margin-top: 3px; }
.bar { height: 100%; border-radius: 4px; background: var(--accent); }
.bar-succeeded { background: #2f9e5b; }
.bar-failed { background: #d64533; }
.bar-running { background: #e0a400; }
.bar-skipped { background: #aab2bf; }
section.step { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 4px 14px 10px; margin-top: 10px; }
table.log tr.level-error td { color: var(--err); }
table.log tr.level-warn td { color: var(--run); }

.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px; }
.sign-in { max-width: 460px; margin: 60px auto; }
.sign-in form { display: flex; flex-direction: column; gap: 8px; }
.sign-in label { font-weight: 600; }
.sign-in button { align-self: flex-start; }
`;
