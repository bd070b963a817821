/**
 * The seam between the SQL store (sql-store.ts, statements in plans.ts) and a database engine.
 * Statements are written once, with `?` placeholders and unqualified table names; a dialect
 * runs them: its placeholders, its transactions and group commit, its locks and how it hands back
 * JSON. Everything else — the statements, the row mappers, the token wrapper — is shared.
 */

/** One statement of a plan; `lock` serialises plans on the same key (PostgreSQL: an advisory lock). */
export type Step = { sql: string; params?: unknown[] } | { lock: string };

export interface StepResult {
  rows: Array<Record<string, unknown>>;
  /** Rows inserted, updated or deleted. */
  changes: number;
}

export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  /** Runs one read against committed state. */
  read<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /**
   * Runs the steps in one transaction (a group commit may hold several plans: `kind` names the
   * plan for statistics) and returns each step's result, in order.
   */
  write(kind: string, steps: Step[]): Promise<StepResult[]>;
  /** A JSON column's value as read (text on SQLite, already parsed on PostgreSQL) → the value. */
  json(value: unknown): unknown;
}

/** `?` → `$1, $2, …`: PostgreSQL's placeholders (the statements hold no `?` in literals). */
export function dollarPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
