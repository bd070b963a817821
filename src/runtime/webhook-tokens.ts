/**
 * Webhook tokens cached in memory both ways (token → integration for the intake hot path,
 * integration → token for URLs). The store is the source of truth (stable across restarts and
 * replicas); a miss asks it once, so a token rotated by another replica still resolves.
 */
import type { Store } from '../store/types.js';

export class WebhookTokens {
  private readonly toName = new Map<string, string>();
  private readonly toToken = new Map<string, string>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(private readonly store: Store) {}

  /**
   * The integration's token, created on first use. Calls made while the store is asked share that
   * one question: at start-up each webhook integration is asked for twice at once (its `change`
   * event and the start's own wait), a read and an insert each.
   */
  tokenFor(integration: string): Promise<string> {
    const cached = this.toToken.get(integration);
    if (cached) return Promise.resolve(cached);
    let pending = this.pending.get(integration);
    if (!pending) {
      pending = this.store.webhookToken(integration).then(
        (token) => {
          this.pending.delete(integration);
          this.remember(integration, token);
          return token;
        },
        (err: unknown) => {
          this.pending.delete(integration);
          throw err;
        },
      );
      this.pending.set(integration, pending);
    }
    return pending;
  }

  cachedToken(integration: string): string | undefined {
    return this.toToken.get(integration);
  }

  /** Synchronous hit for the hot path; undefined means "ask `resolve`". */
  cachedIntegration(token: string): string | undefined {
    return this.toName.get(token);
  }

  async resolve(token: string): Promise<string | undefined> {
    const hit = this.toName.get(token);
    if (hit) return hit;
    // Tokens are long random strings; anything else cannot be one, so spare the store.
    if (!/^[A-Za-z0-9_-]{16,128}$/.test(token)) return undefined;
    const name = await this.store.integrationForToken(token);
    if (name) this.remember(name, token);
    return name;
  }

  async rotate(integration: string): Promise<string> {
    const token = await this.store.rotateWebhookToken(integration);
    this.remember(integration, token);
    return token;
  }

  private remember(integration: string, token: string): void {
    const old = this.toToken.get(integration);
    if (old && old !== token) this.toName.delete(old);
    this.toToken.set(integration, token);
    this.toName.set(token, integration);
  }
}
