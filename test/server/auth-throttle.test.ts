/** The auth throttle's own bounds (memory, address grouping) and the admin token strength check. */
import { describe, expect, it } from 'vitest';
import { checkAdminToken, tokenBits } from '../../src/server/admin-token.js';
import { AuthThrottle, addressKey } from '../../src/server/auth-throttle.js';

describe('AuthThrottle', () => {
  it('remembers at most maxClients addresses, however many fail (the least recent are forgotten)', () => {
    const throttle = new AuthThrottle({ maxFailures: 2, maxLockoutMs: 60_000, maxClients: 100 });
    for (let i = 0; i < 5000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`, 'admin-api');
    expect(throttle.size).toBe(100);
    // The newest are kept: the last address is one failure from a lockout, the first is forgotten.
    throttle.failed('10.0.19.135', 'admin-api');
    expect(() => throttle.assertNotLocked('10.0.19.135', 'admin-api')).toThrow(/try again in 1 s/);
    expect(() => throttle.assertNotLocked('10.0.0.0', 'admin-api')).not.toThrow();
  });

  it('doubles the lockout per further failure, never beyond the cap; a success forgets the client', () => {
    const throttle = new AuthThrottle({ maxFailures: 1, maxLockoutMs: 3000 });
    const retryAfter = () => {
      try {
        throttle.assertNotLocked('c', 'sign-in');
        return 0;
      } catch (err) {
        return Number((err as { headers: Record<string, string> }).headers['retry-after']);
      }
    };
    const seen = [];
    for (let i = 0; i < 5; i++) {
      throttle.failed('c', 'sign-in');
      seen.push(retryAfter());
    }
    expect(seen).toEqual([1, 2, 3, 3, 3]);
    throttle.succeeded('c');
    expect(retryAfter()).toBe(0);
  });

  it('counts IPv6 clients per /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
  });
});

describe('admin token strength', () => {
  it('judges bits by length and alphabet', () => {
    expect(tokenBits('a')).toBe(4);
    expect(tokenBits('c0ffee'.repeat(6))).toBe(144); // 36 hex digits
    expect(tokenBits('f'.repeat(64))).toBe(256); // openssl rand -hex 32
    expect(tokenBits('Z'.repeat(27))).toBe(126); // letters only: 4.7 bits each
  });

  it('warns, refuses under NODE_ENV=production, and refuses characters a bearer token cannot carry', () => {
    const warnings: string[] = [];
    const warn = (m: string) => void warnings.push(m);
    checkAdminToken('0123456789abcdef'.repeat(2), 'X', {}, warn);
    expect(warnings).toEqual([]);
    checkAdminToken('short', 'X', { NODE_ENV: 'development' }, warn);
    expect(warnings).toEqual([expect.stringMatching(/admin token in X is weak: at most 23 bits.*openssl rand -hex 32/)]);
    expect(() => checkAdminToken('short', 'X', { NODE_ENV: 'production' }, warn)).toThrow(/refused because NODE_ENV=production/);
    expect(() => checkAdminToken('correct horse battery staple and more words', 'X', {}, warn)).toThrow(/characters a bearer token cannot carry/);
  });
});
