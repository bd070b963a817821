/**
 * Whether a JSONata expression surely compiles, decided without compiling it: a recogniser for
 * the common subset of the language — paths of plain names from a variable or a name, `$fn(…)`
 * calls, literals (strings without escapes), object and array constructors, parentheses, unary
 * minus, arithmetic, comparison, `&`, `and`, `or`, `in`, and `? :` — that follows jsonata's own
 * lexer and its Pratt parser's binding powers (jsonata.js `operators`, `infix`, `prefix`).
 *
 * `true` means jsonata(body) compiles without an error, so the compile can wait until the
 * expression first runs (templates.ts); `false` means "not sure": the expression is compiled at
 * load, which reports its syntax errors there as before. test/definition/expression-check.test.ts
 * holds every `true` against jsonata itself.
 */

type Tok = { k: 'op'; v: string } | { k: 'lit' } | { k: 'name'; v: string } | { k: 'var' } | { k: 'end' };

/** Binding powers of the operators the subset has (jsonata's `operators` table). */
const LBP: Record<string, number> = {
  '.': 75,
  '[': 80,
  '{': 70,
  '(': 80,
  '?': 20,
  '+': 50,
  '-': 50,
  '*': 60,
  '/': 60,
  '%': 60,
  '=': 40,
  '<': 40,
  '>': 40,
  '!=': 40,
  '<=': 40,
  '>=': 40,
  '&': 50,
  and: 30,
  or: 25,
  in: 40,
  ':': 0,
  ',': 0,
  ')': 0,
  ']': 0,
  '}': 0,
};

const BINARY = new Set(['+', '-', '*', '/', '%', '=', '<', '>', '!=', '<=', '>=', '&', 'and', 'or', 'in']);
/** Characters that end a name in jsonata's lexer: its single-character operators. */
const NAME_STOP = new Set('.[]{}(),@#;:?+-*/%|=<>^&!~'.split(''));
const WHITESPACE = ' \t\n\r\v';
const NUMBER = /(0|[1-9][0-9]*)(\.[0-9]+)?([Ee][-+]?[0-9]+)?/y;
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A name or variable token: up to whitespace or an operator character, as jsonata's lexer reads it. */
const WORD = /[^ \t\n\r\v.[\]{}(),@#;:?+\-*/%|=<>^&!~]*/y;
const UNSUPPORTED_PAIRS = new Set(['/*', '..', ':=', '**', '~>', '?:', '??']);
const END: Tok = { k: 'end' };
const LITERAL: Tok = { k: 'lit' };
const VARIABLE: Tok = { k: 'var' };
const PLAIN_VAR = /^\$[A-Za-z0-9_]*$/;

const UNSURE: unique symbol = Symbol('unsure');
function unsure(): never {
  throw UNSURE;
}

/** Expressions longer than this are always compiled at load. */
const MAX_DEFERRED_LENGTH = 2000;

export function surelyCompiles(body: string): boolean {
  // Long expressions are rare and may exhaust jsonata's stack however plain they are
  // (`$a.b.b.…` 50,000 long does): compiled at load, where that is reported.
  if (body.length > MAX_DEFERRED_LENGTH) return false;
  try {
    return new Recogniser(body).run();
  } catch {
    // UNSURE, or anything else (a stack overflow on 50,000 nested parentheses): compiled at load,
    // where jsonata's own error is reported with its position.
    return false;
  }
}

/** Kinds of what an operand was, for what may follow it. */
const PATH = 1; // a name or a path of names: `.name` may follow
const VAR = 2; // a bare variable: `.name` and `(…)` may follow
const CALL = 3; // `$fn(…)`: `.name` may follow
const OTHER = 4;

class Recogniser {
  private pos = 0;
  private tok: Tok = END;

  constructor(private readonly s: string) {}

  run(): boolean {
    this.next();
    this.expression(0);
    return this.tok.k === 'end';
  }

  private lbp(): number {
    const t = this.tok;
    if (t.k !== 'op') return 0;
    const bp = LBP[t.v];
    return bp === undefined ? unsure() : bp;
  }

  private isOp(v: string): boolean {
    return this.tok.k === 'op' && this.tok.v === v;
  }

  private expect(v: string): void {
    if (!this.isOp(v)) unsure();
    this.next();
  }

  private expression(rbp: number): number {
    let left = this.nud();
    while (rbp < this.lbp()) {
      const op = (this.tok as { v: string }).v;
      this.next();
      left = this.led(op, left);
    }
    return left;
  }

  private nud(): number {
    const t = this.tok;
    this.next();
    switch (t.k) {
      case 'lit':
        return OTHER;
      case 'var':
        return VAR;
      case 'name':
        if (t.v === 'function') unsure();
        return PATH;
      case 'end':
        return unsure();
    }
    switch (t.v) {
      case '-':
        this.expression(70);
        return OTHER;
      case '(':
        this.expression(0);
        this.expect(')');
        return OTHER;
      case '[':
        if (!this.isOp(']'))
          for (;;) {
            this.expression(0);
            if (!this.isOp(',')) break;
            this.next();
          }
        this.expect(']');
        return OTHER;
      case '{':
        if (!this.isOp('}'))
          for (;;) {
            this.expression(0);
            this.expect(':');
            this.expression(0);
            if (!this.isOp(',')) break;
            this.next();
          }
        this.expect('}');
        return OTHER;
    }
    return unsure();
  }

  private led(op: string, left: number): number {
    if (op === '.') {
      // Only `.name` after a name, a variable, a call or a path (jsonata refuses literal steps).
      if (left === OTHER || this.tok.k !== 'name' || this.tok.v === 'function') unsure();
      this.next();
      if (this.isOp('(') || this.isOp('[') || this.isOp('{')) unsure();
      return PATH;
    }
    if (op === '(') {
      if (left !== VAR) unsure();
      if (!this.isOp(')'))
        for (;;) {
          if (this.isOp('?')) unsure(); // partial application
          this.expression(0);
          if (!this.isOp(',')) break;
          this.next();
        }
      this.expect(')');
      return CALL;
    }
    if (op === '?') {
      this.expression(0);
      if (this.isOp(':')) {
        this.next();
        this.expression(0);
      }
      return OTHER;
    }
    if (BINARY.has(op)) {
      this.expression(LBP[op]!);
      return OTHER;
    }
    return unsure();
  }

  /** jsonata's lexer, for the tokens of the subset; anything else is unsure. */
  private next(): void {
    const s = this.s;
    let p = this.pos;
    while (p < s.length && WHITESPACE.includes(s[p]!)) p++;
    if (p >= s.length) {
      this.pos = p;
      this.tok = END;
      return;
    }
    const c = s[p]!;
    const d = s[p + 1];
    if (d !== undefined) {
      const two = c + d;
      if (UNSUPPORTED_PAIRS.has(two)) unsure();
      if (two === '!=' || two === '>=' || two === '<=') {
        this.pos = p + 2;
        this.tok = { k: 'op', v: two };
        return;
      }
    }
    if (NAME_STOP.has(c)) {
      if (LBP[c] === undefined) unsure(); // @ # ; | ^ ! ~
      this.pos = p + 1;
      this.tok = { k: 'op', v: c };
      return;
    }
    if (c === '"' || c === "'") {
      const end = s.indexOf(c, p + 1);
      if (end < 0) unsure();
      const backslash = s.indexOf('\\', p + 1);
      if (backslash >= 0 && backslash < end) unsure();
      this.pos = end + 1;
      this.tok = LITERAL;
      return;
    }
    NUMBER.lastIndex = p;
    const m = NUMBER.exec(s);
    if (m) {
      if (!Number.isFinite(parseFloat(m[0]))) unsure();
      this.pos = p + m[0].length;
      this.tok = LITERAL;
      return;
    }
    if (c === '`') unsure();
    WORD.lastIndex = p;
    const word = WORD.exec(s)![0];
    this.pos = p + word.length;
    if (c === '$') {
      if (!PLAIN_VAR.test(word)) unsure();
      this.tok = VARIABLE;
      return;
    }
    if (!PLAIN_NAME.test(word)) unsure();
    switch (word) {
      case 'and':
      case 'or':
      case 'in':
        this.tok = { k: 'op', v: word };
        return;
      case 'true':
      case 'false':
      case 'null':
        this.tok = LITERAL;
        return;
    }
    this.tok = { k: 'name', v: word };
  }
}
