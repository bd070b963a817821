/**
 * A fast path for the YAML that integration files are usually written in: block mappings and
 * sequences, single-line plain and quoted scalars, single-line flow collections, comments, and
 * plain block scalars as mapping values (multi-line expressions). It
 * builds the same JSON value the `yaml` library gives (core schema, YAML 1.2) and records where
 * each node starts, as the library's `range[0]` would, at a fraction of the cost.
 *
 * It accepts only what it understands completely and what the library reads without an error;
 * for anything else — anchors, aliases, tags, merge keys, most block scalars, multi-line scalars or
 * flow collections, tabs, CR, control or unusual characters, document markers, duplicate keys,
 * keys that are not strings — it returns `undefined` and the caller parses the file with the
 * library, so the value and every reported position stay what the library gives.
 * test/definition/yaml-fast.test.ts compares both on every fixture and on mutated files.
 */

/** Where a node starts (`o`), its key's start (`k`, -1 if none), quoted (`q`), its children (`c`). */
export interface FastNode {
  t: typeof SCALAR | typeof MAP | typeof SEQ;
  o: number;
  k: number;
  q: boolean;
  c?: Map<string, FastNode> | FastNode[];
  /** A block scalar: written over several lines. */
  ml?: true;
}

export const SCALAR = 0;
export const MAP = 1;
export const SEQ = 2;

export interface FastParse {
  value: unknown;
  root: FastNode;
}

/** Characters outside printable ASCII, LF and the ordinary non-ASCII planes send a file to the library. */
const UNSAFE = /[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]/;

const FAIL: unique symbol = Symbol('not for the fast path');
function fail(): never {
  throw FAIL;
}

export function fastParseYaml(text: string): FastParse | undefined {
  if (UNSAFE.test(text)) return undefined;
  try {
    return new FastParser(text).document();
  } catch {
    // FAIL, or anything else — e.g. a stack overflow on flow collections nested 60,000 deep: the
    // library reads the file instead and reports what is wrong with it, with its position.
    return undefined;
  }
}

const NULL_RE = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL_RE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const OCT_RE = /^0o[0-7]+$/;
const INT_RE = /^[-+]?[0-9]+$/;
const HEX_RE = /^0x[0-9a-fA-F]+$/;
const NAN_INF_RE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXP_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** A plain scalar's value under the core schema, tested in the library's order of tags. */
export function plainScalarValue(s: string): unknown {
  const c = s.charCodeAt(0);
  // A letter starts only strings, or null/true/false written in 4 or 5 letters: the common case,
  // no regular expression.
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
    if (s.length !== 4 && s.length !== 5) return s;
    if (c !== 110 && c !== 78 && c !== 116 && c !== 84 && c !== 102 && c !== 70) return s;
  }
  if (NULL_RE.test(s)) return null;
  if (BOOL_RE.test(s)) return c === 116 || c === 84;
  if (OCT_RE.test(s)) return parseInt(s.substring(2), 8);
  if (INT_RE.test(s)) return parseInt(s, 10);
  if (HEX_RE.test(s)) return parseInt(s.substring(2), 16);
  if (NAN_INF_RE.test(s)) return s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (EXP_RE.test(s)) return parseFloat(s);
  if (FLOAT_RE.test(s)) return parseFloat(s);
  return s;
}

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

/** Where scanning stops (native search: the loader runs mostly before the JIT has warmed up). */
const PLAIN_BLOCK_STOP = /:(?=[ \n]|$)| #|\n/g;
const PLAIN_FLOW_STOP = /[,[\]{}\n]|:(?=[ ,[\]{}\n]|$)| #/g;
const DOUBLE_QUOTED_STOP = /["\\\n]/g;
const SINGLE_QUOTED_STOP = /['\n]/g;

const SP = 32;
const LF = 10;

/** Plain scalars may not start with these (`-` only when followed by a space or the end of line). */
function badPlainStart(c: number): boolean {
  switch (c) {
    case 0x3f: // ?
    case 0x3a: // :
    case 0x2c: // ,
    case 0x5b: // [
    case 0x5d: // ]
    case 0x7b: // {
    case 0x7d: // }
    case 0x23: // #
    case 0x26: // &
    case 0x2a: // *
    case 0x21: // !
    case 0x7c: // |
    case 0x3e: // >
    case 0x27: // '
    case 0x22: // "
    case 0x25: // %
    case 0x40: // @
    case 0x60: // `
    case SP:
    case LF:
      return true;
  }
  return false;
}

function isFlowIndicator(c: number): boolean {
  return c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d;
}

class FastParser {
  private readonly n: number;
  /** Start of the next content line (not blank, not only a comment), -1 at the end. */
  private line = -1;
  /** Its indentation. */
  private indent = 0;

  constructor(private readonly t: string) {
    this.n = t.length;
  }

  document(): FastParse {
    this.nextContent(0);
    if (this.line < 0) fail();
    const start = this.line + this.indent;
    if (this.isSeqItem(start)) fail();
    const [value, root] = this.blockMap(this.indent, start);
    if (this.line >= 0) fail();
    return { value, root };
  }

  /** Moves to the next content line at or after `p` (a line start). */
  private nextContent(p: number): void {
    const t = this.t;
    const n = this.n;
    while (p < n) {
      let q = p;
      while (q < n && t.charCodeAt(q) === SP) q++;
      if (q >= n) break;
      const c = t.charCodeAt(q);
      if (c === LF) {
        p = q + 1;
        continue;
      }
      if (c === 0x23) {
        const e = t.indexOf('\n', q);
        if (e < 0) break;
        p = e + 1;
        continue;
      }
      if (q === p && (t.startsWith('---', p) || t.startsWith('...', p))) fail();
      this.line = p;
      this.indent = q - p;
      return;
    }
    this.line = -1;
    this.indent = 0;
  }

  /**
   * After a value ending at `p`: only spaces and a comment may follow on its line; then the next
   * content line. `spaced`: a space is known to precede `p` (a comment may start right there).
   */
  private endLine(p: number, spaced = false): void {
    const t = this.t;
    const from = spaced ? -1 : p;
    while (p < this.n && t.charCodeAt(p) === SP) p++;
    if (p >= this.n) {
      this.line = -1;
      this.indent = 0;
      return;
    }
    const c = t.charCodeAt(p);
    if (c === 0x23) {
      if (p === from) fail(); // a comment needs a space before it
      const e = t.indexOf('\n', p);
      if (e < 0) {
        this.line = -1;
        this.indent = 0;
        return;
      }
      p = e;
    } else if (c !== LF) fail();
    this.nextContent(p + 1);
  }

  private isSeqItem(p: number): boolean {
    if (this.t.charCodeAt(p) !== 0x2d) return false;
    const c = this.t.charCodeAt(p + 1);
    return p + 1 >= this.n || c === SP || c === LF;
  }

  /** A block mapping whose first key starts at `p`, in column `indent` (0-based). */
  private blockMap(indent: number, p: number): [Record<string, unknown>, FastNode] {
    const t = this.t;
    const obj: Record<string, unknown> = {};
    const children = new Map<string, FastNode>();
    const node: FastNode = { t: MAP, o: p, k: -1, q: false, c: children };
    for (;;) {
      const keyStart = p;
      const key = this.key(p);
      p = this.keyEnd;
      if (children.has(key)) fail();
      let value: unknown;
      let child: FastNode;
      while (p < this.n && t.charCodeAt(p) === SP) p++;
      const c = p < this.n ? t.charCodeAt(p) : LF;
      if (c === LF || c === 0x23) {
        const nullAt = p;
        this.endLine(p, true);
        if (this.line >= 0 && this.indent > indent) {
          [value, child] = this.block(this.indent, this.line + this.indent);
        } else if (this.line >= 0 && this.indent === indent && this.isSeqItem(this.line + indent)) {
          [value, child] = this.blockSeq(indent, this.line + indent);
        } else {
          value = null;
          child = { t: SCALAR, o: nullAt, k: -1, q: false };
        }
      } else if (c === 0x7c || c === 0x3e) {
        [value, child] = this.blockScalar(p, indent);
      } else {
        [value, child] = this.inline(p);
        this.endLine(this.valueEnd);
      }
      child.k = keyStart;
      obj[key] = value;
      children.set(key, child);
      if (this.line < 0 || this.indent < indent) return [obj, node];
      if (this.indent > indent) fail();
      p = this.line + indent;
      if (this.isSeqItem(p)) fail();
    }
  }

  /** A block sequence whose first `-` is at `p`, the first non-space of its line, in column `indent`. */
  private blockSeq(indent: number, p: number): [unknown[], FastNode] {
    const t = this.t;
    const arr: unknown[] = [];
    const items: FastNode[] = [];
    const node: FastNode = { t: SEQ, o: p, k: -1, q: false, c: items };
    for (;;) {
      const lineStart = p - indent;
      let q = p + 1;
      if (q >= this.n || t.charCodeAt(q) !== SP) fail(); // `-` alone on its line
      while (q < this.n && t.charCodeAt(q) === SP) q++;
      const c = q < this.n ? t.charCodeAt(q) : LF;
      if (c === LF || c === 0x23 || this.isSeqItem(q)) fail();
      let value: unknown;
      let child: FastNode;
      if (this.startsKey(q)) {
        [value, child] = this.blockMap(q - lineStart, q);
      } else {
        [value, child] = this.inline(q);
        this.endLine(this.valueEnd);
      }
      arr.push(value);
      items.push(child);
      if (this.line < 0 || this.indent < indent) return [arr, node];
      if (this.indent > indent) fail();
      p = this.line + indent;
      if (!this.isSeqItem(p)) return [arr, node];
    }
  }

  /** A nested block node (mapping or sequence) starting at `p`. */
  private block(indent: number, p: number): [unknown, FastNode] {
    if (this.isSeqItem(p)) return this.blockSeq(indent, p);
    if (!this.startsKey(p)) fail();
    return this.blockMap(indent, p);
  }

  /**
   * A block scalar (`|`, `|-`, `>`, `>-`) as a mapping value at `p`, in a mapping at column
   * `indent`: its header alone on its line, then lines at one indentation deeper than the mapping
   * (a literal block may indent further), no blank or whitespace-only lines, each ending with a
   * line break, and a content line after it that belongs to the mapping or to a block around it.
   * `+`, indentation indicators, comments on the header, blank lines and a folded block's
   * more-indented lines are left to the library.
   */
  private blockScalar(p: number, indent: number): [string, FastNode] {
    const t = this.t;
    const folded = t.charCodeAt(p) === 0x3e;
    let q = p + 1;
    const strip = t.charCodeAt(q) === 0x2d;
    if (strip) q++;
    if (t.charCodeAt(q) !== LF) fail();
    const lines: string[] = [];
    let contentIndent = -1;
    let at = q + 1;
    for (;;) {
      if (at >= this.n) break;
      let i = at;
      while (t.charCodeAt(i) === SP) i++;
      const lineIndent = i - at;
      if (i >= this.n || t.charCodeAt(i) === LF) fail(); // blank or whitespace-only line
      if (contentIndent < 0) {
        if (lineIndent <= indent) fail(); // empty block
        contentIndent = lineIndent;
      } else if (lineIndent < contentIndent) break;
      const end = t.indexOf('\n', i);
      if (end < 0) fail(); // the last line ends the file without a line break
      const line = t.slice(at + contentIndent, end);
      if (folded && line.charCodeAt(0) === SP) fail(); // more-indented line in a folded block
      lines.push(line);
      at = end + 1;
    }
    if (contentIndent < 0) fail();
    this.nextContent(at);
    // What follows must be content of an enclosing block (a comment line there is left to the library).
    if (this.line >= 0 && this.line !== at) fail();
    const value = lines.join(folded ? ' ' : '\n') + (strip ? '' : '\n');
    return [value, { t: SCALAR, o: p, k: -1, q: false, ml: true }];
  }

  /** Set by key(), inline(), flow parts: the offset just past what they read. */
  private keyEnd = 0;
  private valueEnd = 0;

  /** Whether an implicit key (`key:` followed by a space or the line's end) starts at `p`. */
  private startsKey(p: number): boolean {
    const t = this.t;
    const c = t.charCodeAt(p);
    if (c === 0x22 || c === 0x27) {
      const e = this.quotedEnd(p);
      return e >= 0 && t.charCodeAt(e) === 0x3a && (e + 1 >= this.n || t.charCodeAt(e + 1) === SP || t.charCodeAt(e + 1) === LF);
    }
    if (!this.plainStartOk(p, false)) return false;
    const e = this.plainBlockEnd(p);
    return e < this.n && t.charCodeAt(e) === 0x3a;
  }

  /** Where a quoted scalar starting at `p` ends (just past its closing quote), -1 if not on this line. */
  private quotedEnd(p: number): number {
    const t = this.t;
    const re = t.charCodeAt(p) === 0x22 ? DOUBLE_QUOTED_STOP : SINGLE_QUOTED_STOP;
    re.lastIndex = p + 1;
    for (let m; (m = re.exec(t)); ) {
      const i = m.index;
      const c = t.charCodeAt(i);
      if (c === LF) return -1;
      if (c === 0x5c) {
        if (i + 1 >= this.n || t.charCodeAt(i + 1) === LF) return -1; // an escaped line break
        re.lastIndex = i + 2;
        continue;
      }
      if (c === 0x27 && t.charCodeAt(i + 1) === 0x27) {
        re.lastIndex = i + 2;
        continue;
      }
      return i + 1;
    }
    return -1;
  }

  private plainStartOk(p: number, flow: boolean): boolean {
    const t = this.t;
    const c = t.charCodeAt(p);
    if (p >= this.n) return false;
    if (c === 0x2d) {
      const d = t.charCodeAt(p + 1);
      return p + 1 < this.n && d !== SP && d !== LF && !(flow && isFlowIndicator(d));
    }
    return !badPlainStart(c);
  }

  /** End of a plain scalar in block context: before `: `, `:` at the line's end, ` #`, or the line's end. */
  private plainBlockEnd(p: number): number {
    PLAIN_BLOCK_STOP.lastIndex = p;
    const m = PLAIN_BLOCK_STOP.exec(this.t);
    return m ? m.index : this.n;
  }

  /** A mapping key at `p` (plain or quoted, a string), followed by `:`; sets keyEnd past the `:`. */
  private key(p: number): string {
    const t = this.t;
    let key: string;
    let end: number;
    const c = t.charCodeAt(p);
    if (c === 0x22 || c === 0x27) {
      end = this.quotedEnd(p);
      if (end < 0) fail();
      key = this.quotedValue(p, end);
    } else {
      if (!this.plainStartOk(p, false)) fail();
      end = this.plainBlockEnd(p);
      if (t.charCodeAt(end - 1) === SP) fail(); // `key :` — valid, but not worth the cases
      const v = plainScalarValue(t.slice(p, end));
      if (typeof v !== 'string') fail();
      key = v;
    }
    if (end - p > 1000 || t.charCodeAt(end) !== 0x3a) fail();
    const d = t.charCodeAt(end + 1);
    if (end + 1 < this.n && d !== SP && d !== LF) fail();
    if (key === '__proto__' || key === '<<') fail();
    this.keyEnd = end + 1;
    return key;
  }

  /** A flow collection or a quoted scalar starting at `p`; undefined for a plain scalar. */
  private flowOrQuoted(p: number): [unknown, FastNode] | undefined {
    const c = this.t.charCodeAt(p);
    if (c === 0x5b || c === 0x7b) return this.flow(p);
    if (c !== 0x22 && c !== 0x27) return undefined;
    const end = this.quotedEnd(p);
    if (end < 0) fail();
    this.valueEnd = end;
    return [this.quotedValue(p, end), { t: SCALAR, o: p, k: -1, q: true }];
  }

  /** A value written on the key's (or the `- `'s) line: flow collection, quoted or plain scalar. */
  private inline(p: number): [unknown, FastNode] {
    const t = this.t;
    const nested = this.flowOrQuoted(p);
    if (nested) return nested;
    if (!this.plainStartOk(p, false)) fail();
    let end = this.plainBlockEnd(p);
    this.valueEnd = end;
    while (t.charCodeAt(end - 1) === SP) end--;
    return [plainScalarValue(t.slice(p, end)), { t: SCALAR, o: p, k: -1, q: false }];
  }

  /** The value of the quoted scalar `t[p, end)` (quotes included). */
  private quotedValue(p: number, end: number): string {
    const t = this.t;
    if (t.charCodeAt(p) === 0x27) {
      const s = t.slice(p + 1, end - 1);
      return s.includes("'") ? s.replace(/''/g, "'") : s;
    }
    const s = t.slice(p + 1, end - 1);
    if (!s.includes('\\')) return s;
    let res = '';
    for (let i = 0; i < s.length; i++) {
      const ch = s[i]!;
      if (ch !== '\\') {
        res += ch;
        continue;
      }
      const next = s[++i]!;
      const cc = ESCAPES[next];
      if (cc !== undefined) {
        res += cc;
        continue;
      }
      if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = s.substr(i + 1, length);
        if (hex.length !== length || !/^[0-9a-fA-F]+$/.test(hex)) fail();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) fail();
        res += String.fromCodePoint(code);
        i += length;
        continue;
      }
      fail();
    }
    return res;
  }

  /** A flow collection on one line starting at `p`; sets valueEnd past its closing bracket. */
  private flow(p: number): [unknown, FastNode] {
    const t = this.t;
    const open = t.charCodeAt(p);
    let i = this.skipSpaces(p + 1);
    if (open === 0x5b) {
      const arr: unknown[] = [];
      const items: FastNode[] = [];
      const node: FastNode = { t: SEQ, o: p, k: -1, q: false, c: items };
      if (t.charCodeAt(i) === 0x5d) {
        this.valueEnd = i + 1;
        return [arr, node];
      }
      for (;;) {
        const [v, child] = this.flowItem(i);
        arr.push(v);
        items.push(child);
        i = this.skipSpaces(this.valueEnd);
        const c = t.charCodeAt(i);
        if (c === 0x2c) {
          i = this.skipSpaces(i + 1);
          if (t.charCodeAt(i) === 0x5d) fail();
          continue;
        }
        if (c === 0x5d) {
          this.valueEnd = i + 1;
          return [arr, node];
        }
        fail();
      }
    }
    const obj: Record<string, unknown> = {};
    const children = new Map<string, FastNode>();
    const node: FastNode = { t: MAP, o: p, k: -1, q: false, c: children };
    if (t.charCodeAt(i) === 0x7d) {
      this.valueEnd = i + 1;
      return [obj, node];
    }
    for (;;) {
      const keyStart = i;
      let key: string;
      const c = t.charCodeAt(i);
      if (c === 0x22 || c === 0x27) {
        const end = this.quotedEnd(i);
        if (end < 0) fail();
        key = this.quotedValue(i, end);
        i = end;
      } else {
        if (!this.plainStartOk(i, true)) fail();
        let end = this.plainFlowEnd(i);
        const after = end;
        while (t.charCodeAt(end - 1) === SP) end--;
        if (end !== after) fail(); // `{a : b}`
        const v = plainScalarValue(t.slice(i, end));
        if (typeof v !== 'string') fail();
        key = v;
        i = end;
      }
      if (i - keyStart > 1000 || t.charCodeAt(i) !== 0x3a || t.charCodeAt(i + 1) !== SP) fail();
      if (key === '__proto__' || key === '<<' || children.has(key)) fail();
      i = this.skipSpaces(i + 2);
      const d = t.charCodeAt(i);
      if (d === 0x2c || d === 0x7d) fail(); // an empty value
      const [v, child] = this.flowItem(i);
      child.k = keyStart;
      obj[key] = v;
      children.set(key, child);
      i = this.skipSpaces(this.valueEnd);
      const e = t.charCodeAt(i);
      if (e === 0x2c) {
        i = this.skipSpaces(i + 1);
        if (t.charCodeAt(i) === 0x7d) fail();
        continue;
      }
      if (e === 0x7d) {
        this.valueEnd = i + 1;
        return [obj, node];
      }
      fail();
    }
  }

  /** One entry of a flow collection: a nested collection, a quoted or a plain scalar. */
  private flowItem(i: number): [unknown, FastNode] {
    const t = this.t;
    const nested = this.flowOrQuoted(i);
    if (nested) return nested;
    if (!this.plainStartOk(i, true)) fail();
    let end = this.plainFlowEnd(i);
    this.valueEnd = end;
    while (t.charCodeAt(end - 1) === SP) end--;
    if (t.charCodeAt(this.valueEnd) === 0x3a) fail(); // an implicit pair in a sequence, or `a:b`
    return [plainScalarValue(t.slice(i, end)), { t: SCALAR, o: i, k: -1, q: false }];
  }

  /** End of a plain scalar in a flow collection; a line break or comment inside one is not for the fast path. */
  private plainFlowEnd(p: number): number {
    PLAIN_FLOW_STOP.lastIndex = p;
    const m = PLAIN_FLOW_STOP.exec(this.t);
    if (!m || m[0] === '\n' || m[0] === ' #') fail();
    return m.index;
  }

  private skipSpaces(i: number): number {
    while (this.t.charCodeAt(i) === SP) i++;
    if (i >= this.n || this.t.charCodeAt(i) === LF) fail(); // flow collections stay on one line
    return i;
  }
}
