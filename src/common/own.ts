/**
 * Objects keyed by names someone else chose (form fields, part names, query parameters, headers,
 * keys of an expression's result): every name, `__proto__` included, is an own data property.
 */

/** `target[name] = value` as an own data property, also for `__proto__` (whose assignment would set the prototype). */
export function setOwn<T>(target: Record<string, T>, name: string, value: T): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}
