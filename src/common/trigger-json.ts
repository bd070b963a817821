/**
 * The trigger of an execution as stored (JSON text), made once per trigger object: an
 * execution's trigger does not change, so every save of its row reuses the text.
 *
 * Whoever builds a trigger from JSON text may hand over the text it already has
 * (`rememberTriggerJson`), so the store does not serialise again what the caller sent: the webhook
 * intake splices the request body's own text in (triggers/webhook/trigger-data.ts). The text
 * parses to the same value as the object — the object was parsed from it.
 */
const texts = new WeakMap<object, string>();

export function triggerJson(trigger: unknown): string {
  if (trigger === null || typeof trigger !== 'object') return JSON.stringify(trigger ?? null);
  let text = texts.get(trigger);
  if (text === undefined) texts.set(trigger, (text = JSON.stringify(trigger)));
  return text;
}

/** Records `text` as the stored form of `trigger`; `JSON.parse(text)` must equal `trigger`. */
export function rememberTriggerJson(trigger: object, text: string): void {
  texts.set(trigger, text);
}
