/** The appEvent trigger's subscribe/unsubscribe lifecycle (events themselves arrive like webhooks). */
export {
  AppEventSubscriptions,
  subscriptionFingerprint,
  SUBSCRIBE_STATE_KEY,
  SUBSCRIBE_LAST_KEY,
  type AppEventOptions,
  type SubscriptionState,
  type SubscriptionStatus,
  type SubscriptionTriggerData,
} from './subscriptions.js';
