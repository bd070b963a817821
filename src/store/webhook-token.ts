import { randomBytes } from 'node:crypto';

/** A webhook token: 32 random bytes, base64url (256 bits). */
export function newWebhookToken(): string {
  return randomBytes(32).toString('base64url');
}
