/** A small deterministic random source (xorshift32): `rnd(n)` is an integer in [0, n). */
export function seededRandom(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}
