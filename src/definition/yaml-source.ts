/**
 * Parses YAML keeping positions, and maps a JSON pointer of the parsed value back to the line
 * and column of the node it came from — through aliases and merge keys, so an error in a value
 * that came from an anchor is reported where that value is written.
 */
import { type Alias, isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type Pair } from 'yaml';
import { MAX_EXPANDED_VALUES } from './limits.js';
import type { SourcePosition } from './types.js';
import { fastParseYaml, MAP, SCALAR, SEQ, type FastNode } from './yaml-fast.js';

export interface YamlSource {
  file: string;
  text: string;
  /** The document as plain JSON (merge keys applied, aliases resolved). */
  value: unknown;
  /** Syntax errors, each already positioned. */
  syntaxErrors: Array<{ message: string; position: SourcePosition }>;
  /** Position of the node at `pointer`; `part: 'key'` points at the key of an object member. */
  positionOf(pointer: string, part?: 'key' | 'value'): SourcePosition;
  /** Whether the scalar at `pointer` was written with quotes (for expression column offsets). */
  scalarAt(pointer: string): { offset: number; quoted: boolean; singleLine: boolean } | undefined;
}

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  const segments = pointer.slice(1).split('/');
  return pointer.includes('~') ? segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')) : segments;
}

export function joinPointer(base: string, ...segments: Array<string | number>): string {
  let out = base;
  for (const segment of segments) {
    const s = String(segment);
    out += `/${s.includes('~') || s.includes('/') ? s.replace(/~/g, '~0').replace(/\//g, '~1') : s}`;
  }
  return out;
}

/**
 * Parses `text`: the usual shapes of an integration file through the fast path (yaml-fast.ts),
 * everything else — and every file with a syntax error — through the `yaml` library. Both give
 * the same value, errors and positions (test/definition/yaml-fast.test.ts).
 */
export function parseYamlSource(file: string, text: string): YamlSource {
  const fast = fastParseYaml(text);
  if (fast && !expandsBeyond(fast.value, MAX_EXPANDED_VALUES)) return new FastSource(file, text, fast.value, fast.root);
  return parseYamlSourceFull(file, text);
}

/** The fast path's result: positions from the offsets it recorded, lines counted on first use. */
class FastSource implements YamlSource {
  readonly syntaxErrors: YamlSource['syntaxErrors'] = [];
  private lineCounter?: LineCounter;

  constructor(
    readonly file: string,
    readonly text: string,
    readonly value: unknown,
    private readonly root: FastNode,
  ) {}

  positionOf(pointer: string, part: 'key' | 'value' = 'value'): SourcePosition {
    const { node, exact } = this.locate(pointer);
    return this.pos(exact && part === 'key' && node.k >= 0 ? node.k : node.o);
  }

  scalarAt(pointer: string): ReturnType<YamlSource['scalarAt']> {
    const { node, exact } = this.locate(pointer);
    if (!exact || node.t !== SCALAR) return undefined;
    return { offset: node.o, quoted: node.q, singleLine: !node.ml };
  }

  /** The node at `pointer` (exact), or the deepest one reached. */
  private locate(pointer: string): { node: FastNode; exact: boolean } {
    let node = this.root;
    if (pointer === '') return { node, exact: true };
    const segments = pointer.includes('~') ? parsePointer(pointer) : undefined;
    // Without escapes, segments are read in place (no array per lookup).
    for (let i = 0, start = 1; ; i++) {
      const end = segments ? 0 : pointer.indexOf('/', start);
      const segment = segments ? segments[i] : pointer.slice(start, end < 0 ? pointer.length : end);
      if (segment === undefined) break;
      const child =
        node.t === MAP ? (node.c as Map<string, FastNode>).get(segment) : node.t === SEQ ? (node.c as FastNode[])[Number(segment)] : undefined;
      if (!child) return { node, exact: false };
      node = child;
      if (!segments) {
        if (end < 0) break;
        start = end + 1;
      }
    }
    return { node, exact: true };
  }

  private pos(offset: number): SourcePosition {
    let lc = this.lineCounter;
    if (!lc) {
      lc = this.lineCounter = new LineCounter();
      lc.addNewLine(0);
      const text = this.text;
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lc.addNewLine(i + 1);
    }
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  }
}

/** The `yaml` library's parse, with positions through its nodes. */
export function parseYamlSourceFull(file: string, text: string): YamlSource {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys() below: yaml's own `uniqueKeys` check compares
  // every key of a mapping with every other (quadratic: 20,000 keys took seconds).
  const doc = parseDocument(text, { lineCounter, merge: true, prettyErrors: false, uniqueKeys: false });
  const pos = (offset: number): SourcePosition => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const syntaxErrors = doc.errors.map((e) => ({ message: syntaxMessage(e.code, e.message), position: pos(e.pos[0]) }));
  for (const offset of duplicateKeys(doc)) syntaxErrors.push({ message: syntaxMessage('DUPLICATE_KEY', ''), position: pos(offset) });
  syntaxErrors.sort((a, b) => a.position.line - b.position.line || a.position.column - b.position.column);
  let value: unknown = null;
  if (doc.errors.length === 0) {
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      syntaxErrors.push({ message: `YAML could not be read: ${(err as Error).message}`, position: { line: 1, column: 1 } });
    }
    if (expandsBeyond(value, MAX_EXPANDED_VALUES)) {
      value = null;
      syntaxErrors.push({
        message: `aliases expand this file to more than ${MAX_EXPANDED_VALUES.toLocaleString('en-US')} values; alias large anchors less often`,
        position: pos(firstAliasOffset(doc)),
      });
    }
  }

  const locate = (pointer: string) => findNode(doc, parsePointer(pointer));
  return {
    file,
    text,
    value,
    syntaxErrors,
    positionOf(pointer, part = 'value') {
      const found = locate(pointer);
      const node = part === 'key' && found.key ? found.key : found.node;
      const offset = node?.range?.[0] ?? found.nearest?.range?.[0] ?? 0;
      return pos(offset);
    },
    scalarAt(pointer) {
      const { node, exact } = locate(pointer);
      if (!exact || !node || !isScalar(node) || !node.range) return undefined;
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      const singleLine = !text.slice(node.range[0], node.range[1]).includes('\n');
      return { offset: node.range[0], quoted, singleLine };
    },
  };
}

/**
 * Whether walking `value` visits more than `max` values. Aliases share one JS object, so a large
 * anchor aliased many times is small in memory but huge for everything that walks it (schema
 * check, template compilation); the walk counts each visit and stops at `max`.
 */
function expandsBeyond(value: unknown, max: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (++count > max) return true;
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (v && typeof v === 'object') for (const key in v) stack.push((v as Record<string, unknown>)[key]);
  }
  return false;
}

function firstAliasOffset(doc: Document): number {
  let offset = 0;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

/** Offsets of keys written a second time in the same mapping (one Set per mapping: linear). */
function duplicateKeys(doc: Document): number[] {
  const found: number[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const text = keyText(pair.key);
        if (text === undefined || text === '<<') continue;
        if (seen.has(text)) found.push((pair.key as Node).range?.[0] ?? 0);
        else seen.add(text);
      }
    },
  });
  return found;
}

function syntaxMessage(code: string, message: string): string {
  if (code === 'DUPLICATE_KEY') return 'duplicate key: each key may appear only once in a mapping';
  // yaml's messages carry a code frame after the first line; the position is reported separately.
  return `YAML syntax error: ${message.split('\n')[0]}`;
}

interface Found {
  node?: Node;
  key?: Node;
  /** The deepest node reached when the pointer goes past what exists (missing members). */
  nearest?: Node;
  exact: boolean;
}

function findNode(doc: Document, segments: string[]): Found {
  let node: Node | undefined = (doc.contents ?? undefined) as Node | undefined;
  let key: Node | undefined;
  for (const segment of segments) {
    node = resolveAlias(doc, node);
    if (isMap(node)) {
      const pair = findPair(doc, node.items as Pair[], segment);
      if (!pair) return { node, nearest: node, exact: false };
      key = pair.key as Node;
      node = (pair.value ?? pair.key) as Node;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as Node | undefined;
      if (!item) return { node, nearest: node, exact: false };
      key = undefined;
      node = item;
    } else {
      return { node, nearest: node, exact: false };
    }
  }
  return { node, key, exact: true };
}

function resolveAlias(doc: Document, node: Node | undefined): Node | undefined {
  let n = node;
  for (let i = 0; i < 100 && n && isAlias(n); i++) n = (n as Alias).resolve(doc) as Node | undefined;
  return n;
}

/** A member of a mapping, looking through `<<` merge keys when it is not written directly. */
function findPair(doc: Document, items: Pair[], segment: string): Pair | undefined {
  const direct = items.find((p) => keyText(p.key) === segment);
  if (direct) return direct;
  for (const p of items) {
    if (keyText(p.key) !== '<<') continue;
    const sources = resolveAlias(doc, p.value as Node);
    const list = isSeq(sources) ? sources.items.map((s) => resolveAlias(doc, s as Node)) : [sources];
    for (const src of list) {
      if (isMap(src)) {
        const found = findPair(doc, src.items as Pair[], segment);
        if (found) return found;
      }
    }
  }
  return undefined;
}

function keyText(key: unknown): string | undefined {
  // yaml represents the merge key `<<` as a Scalar whose value is a symbol.
  if (isScalar(key)) return typeof key.value === 'symbol' ? '<<' : String(key.value);
  if (typeof key === 'string') return key;
  return undefined;
}
