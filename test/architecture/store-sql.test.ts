/**
 * The store's SQL lives in its plans (docs/architecture.md, "The store"): every statement that
 * reads or writes a table is in src/store/sql/plans.ts or a plan module beside it
 * (`sql/<engine>-plans.ts`), and the executions columns are listed once, in
 * sql/execution-columns.ts. Migrations keep their own DDL. Read from the string and template
 * literals of the source (comments may name statements); transaction control (BEGIN, COMMIT,
 * SAVEPOINT) and SQLite pragmas are the dialects' mechanics and are not looked for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { rowsJson } from '../../src/store/postgres/group-saves.js';
import { ALL_COLUMNS, STATE_COLUMNS } from '../../src/store/sql/execution-columns.js';

const STORE = resolve(import.meta.dirname, '../../src/store');

const isPlans = (file: string) => /^sql\/([a-z-]+-)?plans\.ts$/.test(file);
const isMigrations = (file: string) => /(^|\/)migrations\.ts$/.test(file);
const isColumnDeclaration = (file: string) => file === 'sql/execution-columns.ts';

/** A statement that reads or writes: what belongs in the plans. */
const STATEMENT = /\b(SELECT|INSERT|UPDATE|DELETE|LISTEN|UNLISTEN|NOTIFY)\b|\bWITH\s+\w+\s+AS\b|\bSET\s+search_path\b/;

/** Columns (and their `ExecutionColumns` fields) only the executions table has. */
const EXECUTION_ONLY = /^(status|test|attempt|record|queued_at|started_at|finished_at|duration_ms|error|queuedAt|startedAt|finishedAt|durationMs)$/;

/** A list of three executions columns in a row (`a, b, c`, `e.a, …`, `@a, …`, `a text, …`): a column list. */
function listsExecutionColumns(text: string): boolean {
  let run = 0;
  for (const item of text.split(',')) {
    const name = item
      .trim()
      .replace(/^[(]+|[)]+$/g, '')
      .replace(/^(\w+\.|@|\$)/, '')
      .replace(/\s+\w+$/, '');
    run = EXECUTION_ONLY.test(name) ? run + 1 : 0;
    if (run >= 3) return true;
  }
  return false;
}

interface Literal {
  file: string;
  line: number;
  text: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The string and template literals of a module (a template's parts joined by `{…}` where its substitutions were). */
function literalsOf(file: string, source: string): Literal[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: Literal[] = [];
  const add = (node: ts.Node, text: string) => out.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node, node.text);
    else if (ts.isTemplateExpression(node)) add(node, [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('{…}'));
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const literals = sourceFiles(STORE).flatMap((path) => literalsOf(relative(STORE, path), readFileSync(path, 'utf8')));
const where = (l: Literal) => `src/store/${l.file}:${l.line}: ${l.text.replace(/\s+/g, ' ').slice(0, 100)}`;

describe('the store SQL is in its plans', () => {
  it('no statement outside the plan modules and the migrations', () => {
    const stray = literals.filter((l) => !isPlans(l.file) && !isMigrations(l.file) && STATEMENT.test(l.text));
    expect(stray.map(where)).toEqual([]);
  });

  it('the executions columns are listed only in sql/execution-columns.ts', () => {
    const lists = literals.filter((l) => !isColumnDeclaration(l.file) && !isMigrations(l.file) && listsExecutionColumns(l.text));
    expect(lists.map(where)).toEqual([]);
  });

  it('the scan sees the statements that are there', () => {
    // The plans hold statements of every kind the scan looks for, and it finds them.
    const inPlans = literals.filter((l) => isPlans(l.file) && STATEMENT.test(l.text)).map((l) => l.text);
    for (const kind of ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'LISTEN', 'WITH ']) expect(inPlans.some((t) => t.includes(kind))).toBe(true);
    // An inline statement, in any form a module could write it, is caught, and so is a column list.
    const probe = literalsOf(
      'probe.ts',
      `const a = 'SELECT 1 FROM t'; // SELECT in a comment is not a statement
const b = \`UPDATE \${table} SET x = 1\`;
f(\`DELETE FROM t WHERE id = $1\`);
const c = 'id, status, test, attempt';
const d = \`INSERT INTO \${t} (id) VALUES (@id, @status, @test, @attempt)\`;
const e = \`AS v(id text, status text, attempt int, record json)\`;`,
    );
    expect(probe.filter((l) => STATEMENT.test(l.text)).map((l) => l.line)).toEqual([1, 2, 3, 5]);
    expect(probe.filter((l) => listsExecutionColumns(l.text)).map((l) => l.line)).toEqual([4, 5, 6]);
  });

  it('the hot paths written out by hand follow the declared columns', () => {
    // PostgreSQL's batch rows (postgres/group-saves.ts rowsJson, unrolled for speed): one key per column.
    const row = {
      id: 'e1',
      integration: 'i',
      status: 'running' as const,
      test: false,
      attempt: 1,
      trigger: '{}',
      record: '{}',
      queuedAt: 'q',
      startedAt: 's',
      finishedAt: null,
      durationMs: null,
      error: null,
      correlationKey: 'k',
      versionSha256: null,
      versionCommit: null,
      wakeAt: null,
      retryOf: 'e0',
      cancelRequested: false,
      concurrencyKey: 'c',
    };
    expect(Object.keys(JSON.parse(rowsJson([{ ...row, queuedGiven: true }]))[0])).toEqual([...ALL_COLUMNS, 'queued_given']);
    // The single-save statements' parameters are written out in this order (group-saves.ts
    // updateOne, upsertOne): a change here must be made there too.
    expect(STATE_COLUMNS).toEqual([
      'id',
      'status',
      'attempt',
      'record',
      'started_at',
      'finished_at',
      'duration_ms',
      'error',
      'correlation_key',
      'version_sha256',
      'version_commit',
      'wake_at',
    ]);
    expect(ALL_COLUMNS).toEqual([
      'id',
      'integration',
      'status',
      'test',
      'attempt',
      'trigger',
      'record',
      'queued_at',
      'started_at',
      'finished_at',
      'duration_ms',
      'error',
      'correlation_key',
      'version_sha256',
      'version_commit',
      'wake_at',
      'retry_of',
      'cancel_requested',
      'concurrency_key',
    ]);
  });
});
