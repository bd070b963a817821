/**
 * The fast YAML path (src/definition/yaml-fast.ts) against the `yaml` library's: for every file it
 * accepts, the value, and the position of every node, key and missing member, must be the ones the
 * library gives; a file the library reports errors in must never be accepted. Run on the fixtures,
 * the shipped examples, the YAML examples in docs/, the benchmark's generated files, hand-written edge cases and
 * thousands of mutations of all of them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedYaml } from '../../bench/lib/integrations.js';
import { filesBelow } from '../helpers/files.js';
import { seededRandom } from '../helpers/random.js';
import { loadText } from '../../src/definition/load.js';
import { fastParseYaml } from '../../src/definition/yaml-fast.js';
import { joinPointer, parseYamlSource, parseYamlSourceFull, type YamlSource } from '../../src/definition/yaml-source.js';

const root = join(import.meta.dirname, '..', '..');

const corpus: string[] = [
  ...filesBelow(join(root, 'test'), /\.ya?ml$/).map((f) => readFileSync(f, 'utf8')),
  ...filesBelow(join(root, 'integrations'), /\.ya?ml$/).map((f) => readFileSync(f, 'utf8')),
  ...filesBelow(join(root, 'docs'), /\.md$/).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/```ya?ml\n([\s\S]*?)```/g)].map((m) => m[1]!)),
  ...[0, 1, 9, 42].map(generatedYaml),
];

/** Hand-written shapes at the fast path's edges (some it takes, some it leaves to the library). */
const edges = [
  'a: 1\n',
  'a: 1',
  'a:',
  'a:\n',
  'a: \n',
  'a:   # c\nb: 2\n',
  'a:#c\n',
  'a: b#c\n',
  'a: b #c\n',
  'a: b  \n',
  'a : b\n',
  '"a": b\n',
  "'a': b\n",
  '"a":b\n',
  'a: "x" #c\n',
  'a: "x"#c\n',
  'a: "x" y\n',
  "a: 'it''s'\n",
  'a: "q\\"q\\\\ \\n\\t\\u00e9\\x41\\U0001F600\\/\\_\\N\\L\\P\\e\\0\\a\\b\\f\\v\\r\\ "\n',
  'a: "bad \\d"\n',
  'a: "bad \\u12"\n',
  'a: "\\U00110000"\n',
  'a: "line\\\n  two"\n',
  'a: "two\n  lines"\n',
  'a: plain\n  continued\n',
  'a: b: c\n',
  'a: b:\n',
  'a: - b\n',
  'a: [b, c]\n',
  'a: [b, c] d\n',
  'a: [b, c]:\n',
  'a: [ ]\n',
  'a: {}\n',
  'a: { }\n',
  'a: [b, [c, {d: e, f: [g]}], "h", \'i\']\n',
  'a: [b, c,]\n',
  'a: [b: c]\n',
  'a: {b}\n',
  'a: {b: }\n',
  'a: {b: c, b: d}\n',
  'a: {"b": c, \'d\': e}\n',
  'a: {"b":c}\n',
  'a: {b : c}\n',
  'a: {url: http://x:80/p?q=1}\n',
  'a: [http://x, a:b]\n',
  'a: [a #c]\n',
  'a: [a#c]\n',
  'a: [b,\n  c]\n',
  'a: {b: -1, c: -x, d: -}\n',
  'a: [-, -a]\n',
  'a: b]\n',
  'a: b, c\n',
  'a: {b: c}}\n',
  'a: 0 3 * * *\n',
  'a: "{% $x %}"\n',
  "a: '{% $x %}'\n",
  'a: {% $x %}\n',
  'a: 1\nb: 0o17\nc: 0x1F\nd: -0\ne: +5\nf: 007\ng: 1.5\nh: 1.\ni: .5\nj: 1e3\nk: -1.5E-3\nl: .inf\nm: -.Inf\nn: .nan\no: ~\np: null\nq: Null\nr: NULL\ns: true\nt: False\nu: TRUE\nv: yes\nw: 0b1\nx: 1_000\ny: 12345678901234567890123\nz: 0x\n',
  '1: a\n',
  'true: a\n',
  'null: a\n',
  '~: a\n',
  '"1": a\n',
  '__proto__: a\n',
  'constructor: a\ntoString: b\n',
  '<<: {a: 1}\nb: 2\n',
  'a: &x 1\nb: *x\n',
  'a: !!str 1\n',
  'a: |\n  text\n',
  'a: >-\n  text\n',
  'a: 1\na: 2\n',
  'a:\n  b: 1\n  b: 2\n',
  '- a\n- b\n',
  'a:\n- b\n- c\nd: e\n',
  'a:\n  - b\n  - c\nd: e\n',
  'a:\n  - b\n  d: e\n',
  'a:\n  - b: 1\n    c: 2\n  - d\n',
  'a:\n  -   b: 1\n      c: 2\n',
  'a:\n  - b: 1\n     c: 2\n',
  'a:\n  - b: 1\n   c: 2\n',
  'a:\n  - - b\n',
  'a:\n  -\n    b: 1\n',
  'a:\n  - \n',
  'a:\n  - # c\n    b\n',
  '- a:\n  - x\n',
  'a:\n  b:\n  - x\n  c: 1\n',
  'a:\n    b: 1\n  c: 2\n',
  'a:\n  b: 1\n c: 2\n',
  'a:\n  b: 1\n    c: 2\n',
  'a:\n  # c\n  b: 1\n# d\n  c: 2\n',
  '# head\n\n  \na: 1 # c\n\n# tail\n',
  '  a: 1\n  b: 2\n',
  '  a: 1\nb: 2\n',
  '---\na: 1\n',
  'a: 1\n...\n',
  'a: 1\n---\nb: 2\n',
  '%YAML 1.2\n---\na: 1\n',
  'a: ---\n',
  'a:\n  b\n',
  'a:\n  b\n  c\n',
  'a: @x\n',
  'a: `x\n',
  'a: %x\n',
  'a: ,x\n',
  'a: ?x\n',
  'a: :x\n',
  '? a\n: b\n',
  'a:\tb\n',
  'a: b\r\nc: d\r\n',
  '\ufeffa: 1\n',
  'a: caf\u00e9 \u2603 \ud83d\ude00\n',
  'a: \u00a0x\u00a0\n',
  'a: "\u2028"\n',
  'a: x\u0085y\n',
  '',
  '# only a comment\n',
  'a\n',
  '"a"\n',
  'a: 1\nb\n',
  `${'k'.repeat(1100)}: 1\n`,
  `a: {${'k'.repeat(1100)}: 1}\n`,
  'a: [1, 2]\nb:\n  - {c: [3, {d: 4}]}\n  - "e"\n',
  'a: |\n  x\n    y \n  # not a comment\nb: 1\n',
  'a: |-\n  x\n  y\nb: 1\n',
  'a: >\n  x\n  y\nb: 1\n',
  'a: >-\n  {% $x\n    + 1 %}\nb: 1\n',
  'a: >-\n  x\n   y\nb: 1\n',
  'a: |+\n  x\n\nb: 1\n',
  'a: |2\n   x\nb: 1\n',
  'a: | # c\n  x\nb: 1\n',
  'a: |\n  x\n\n  y\nb: 1\n',
  'a: |\n  x\n  \nb: 1\n',
  'a: |\n  x\n\nb: 1\n',
  'a: |\n  x\n# c\nb: 1\n',
  'a: |\n  x\n # c\nb: 1\n',
  'a: |\n    x\n  y\nb: 1\n',
  'a: |\nb: 1\n',
  'a: |\n  x',
  'a: |\n  x\n',
  'a:\n  b: |\n    x\n  c: 1\nd: 2\n',
  'a:\n  - b: |-\n      x\n      y\n    c: 1\n',
  'a:\n  - |\n    x\n',
  'a: |-\n  x\n  ---\n  ...\nb: 1\n',
];

/** Every pointer in a value, plus members that do not exist below each. */
function pointers(value: unknown, base = ''): string[] {
  const out = [base, joinPointer(base, 'missing'), joinPointer(base, 0), joinPointer(base, 7)];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) out.push(...pointers(value[i], joinPointer(base, i)));
  } else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...pointers(v, joinPointer(base, k)));
  return out;
}

/** Why the fast path disagrees with the library on `text`, or undefined when it agrees (or declines). */
function disagreement(text: string): string | undefined {
  const fast = fastParseYaml(text);
  if (!fast) return undefined;
  const full = parseYamlSourceFull('x.yaml', text);
  if (full.syntaxErrors.length) return `accepted a file the library rejects: ${JSON.stringify(full.syntaxErrors)}`;
  if (!sameValue(fast.value, full.value)) return `value ${JSON.stringify(fast.value)} ≠ ${JSON.stringify(full.value)}`;
  const src: YamlSource = parseYamlSource('x.yaml', text);
  for (const p of pointers(full.value)) {
    for (const part of ['value', 'key'] as const) {
      const a = src.positionOf(p, part);
      const b = full.positionOf(p, part);
      if (a.line !== b.line || a.column !== b.column) return `positionOf(${JSON.stringify(p)}, ${part}) ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`;
    }
    const a = JSON.stringify(src.scalarAt(p));
    const b = JSON.stringify(full.scalarAt(p));
    if (a !== b) return `scalarAt(${JSON.stringify(p)}) ${a} ≠ ${b}`;
  }
  return undefined;
}

/** Deep equality that tells -0 from 0, NaN from null, and minds key order and prototypes. */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Object.is(a, b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (a && typeof a === 'object') {
    if (!b || typeof b !== 'object' || Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

/** Small deterministic changes: the shapes next to valid ones are where a fast path goes wrong. */
function* mutations(text: string, count: number, seed: number): Generator<string> {
  const rnd = seededRandom(seed);
  const inserts = [
    ' ',
    '  ',
    '\n',
    '\n  ',
    ':',
    ': ',
    '-',
    '- ',
    '#',
    ' #',
    '"',
    "'",
    '[',
    ']',
    '{',
    '}',
    ',',
    '&a ',
    '*a',
    '!',
    '|',
    '>',
    '?',
    '%',
    '@',
    '\\',
    'x',
    '0',
    '.',
    '~',
    '<<: ',
    '\t',
    '\r',
  ];
  const lines = text.split('\n');
  for (let i = 0; i < count && text.length > 0; i++) {
    const at = rnd(text.length);
    switch (rnd(5)) {
      case 0:
        yield text.slice(0, at) + text.slice(at + 1 + rnd(3));
        break;
      case 1:
      case 2:
        yield text.slice(0, at) + inserts[rnd(inserts.length)] + text.slice(at);
        break;
      case 3: {
        const l = rnd(lines.length);
        yield [...lines.slice(0, l), lines[l]!, ...lines.slice(l)].join('\n');
        break;
      }
      default: {
        const l = rnd(lines.length);
        const copy = [...lines];
        copy[l] = rnd(2) ? ` ${copy[l]}` : copy[l]!.replace(/^ /, '');
        yield copy.join('\n');
      }
    }
  }
}

describe('fast YAML path', () => {
  it('takes the usual integration files', () => {
    expect(fastParseYaml(generatedYaml(1))).toBeDefined();
    expect(fastParseYaml(generatedYaml(9))).toBeDefined();
    const taken = corpus.filter((t) => fastParseYaml(t)).length;
    expect(taken).toBeGreaterThan(corpus.length / 2);
  });

  it('agrees with the yaml library on every file it takes: the corpus and edge cases', () => {
    for (const text of [...corpus, ...edges]) expect(disagreement(text), text).toBeUndefined();
  });

  it('leaves crafted nesting to the library: a file nested 60,000 deep is a positioned problem, not a crash', () => {
    for (const value of ['['.repeat(60_000) + ']'.repeat(60_000), `${'{a: '.repeat(30_000)}1${'}'.repeat(30_000)}`]) {
      const text = `name: deep\nv: ${value}\n`;
      expect(fastParseYaml(text)).toBeUndefined();
      const loaded = loadText('deep.yaml', text);
      expect(loaded.integration).toBeUndefined();
      expect(loaded.problems[0]).toMatchObject({ file: 'deep.yaml', line: 2 });
    }
  });

  it('agrees with the yaml library on mutated files', () => {
    let taken = 0;
    let n = 0;
    for (const [i, text] of [...corpus, ...edges].entries()) {
      for (const m of mutations(text, 30, i + 1)) {
        n++;
        if (fastParseYaml(m)) taken++;
        expect(disagreement(m), m).toBeUndefined();
      }
    }
    // The mutations must exercise the fast path, not only its refusals.
    expect(taken).toBeGreaterThan(n / 4);
  }, 120_000); // a few thousand parses by two parsers: seconds on a quiet machine, more on a loaded one
});
