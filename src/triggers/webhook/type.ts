/**
 * The webhook trigger type (src/triggers/type.ts). appEvent triggers receive their events the
 * same way and reuse `webhookLike`: the webhook keys, `$trigger` of a manual run, the summary,
 * the test-case keys and how a case becomes a request.
 */
import { newExecutionId } from '../../common/ids.js';
import type { CompiledTrigger, WebhookOptions } from '../../definition/types.js';
import type { ManualRunContext, TriggerTesting, TriggerType } from '../type.js';
import { webhookSpec } from './spec.js';

type Webhook = Extract<CompiledTrigger, { type: 'webhook' }>;
type WebhookLike = Extract<CompiledTrigger, WebhookOptions>;

/** What every trigger that takes requests at /webhooks/<token> shares. */
export const webhookLike = {
  webhook: { options: (t: WebhookLike): WebhookOptions => t },
  evaluates: (t: WebhookLike) => ({ values: [t.hmac?.secret, t.verify?.secret].filter((v) => v !== undefined), steps: [] }),
  /** The payload as a JSON request body. */
  manualTrigger: (_t: WebhookLike, payload: unknown, ctx: ManualRunContext) => ({
    body: { data: payload ?? {}, contentType: 'application/json' },
    headers: { 'content-type': 'application/json' },
    queryParameters: {},
    pathFragment: '',
    method: 'POST',
    webhookUrls: ctx.webhookUrls ?? { live: '', test: '' },
    executionId: ctx.executionId ?? newExecutionId(),
    receivedAt: ctx.now,
  }),
  summary: (t: WebhookLike) => ({
    methods: t.methods,
    response: t.response.mode,
    ...(t.hmac ? { signatureHeader: t.hmac.header } : {}),
    ...(t.verify ? { signatureScheme: t.verify.scheme } : {}),
  }),
  labels: { methods: 'Methods', response: 'Response', signatureHeader: 'Signature header', signatureScheme: 'Signature scheme' },
  caseKeys: (t: WebhookLike) => ({ keys: ['body', 'headers', 'query', 'pathFragment', 'method'], what: `a ${t.type} trigger` }),
  /** A case is a request that goes through the same mapping `serve` uses. */
  testing: (): Promise<TriggerTesting<WebhookLike>> => import('./test-case.js').then((m) => m.webhookTesting),
};

export const webhookTrigger: TriggerType<Webhook> = {
  spec: webhookSpec,
  ...webhookLike,
  console: {
    runHelp: 'Runs the integration now as a test execution; the JSON payload is the request body ($trigger.body.data).',
    labels: webhookLike.labels,
  },
};
