/**
 * What the account dashboard changes for its signed-in account: API keys, usage limits and the webhook signing
 * secret. The use-case functions of each, bound to the store, so that the dashboard's routes never hold one.
 */
import type { Environment } from '../domain/task.js';
import type { UsageLimits } from '../domain/usage.js';
import type { AccountStore, ApiKeyRecord, ApiKeyStore, DeliveryStore, UsageStore } from '../ports/store.js';
import {
  accountLimits,
  type PublicLimits,
  setAccountLimits,
  setApiKeyLimits,
} from '../usage/usage-limits.js';
import { rotateWebhookSecret, type WebhookSecrets, webhookSecrets } from '../webhooks/webhook-secrets.js';
import {
  activeApiKeys,
  type CreatedKey,
  createApiKey,
  revokeActiveApiKey,
  rotateApiKey,
} from './api-keys.js';

export type AccountSettingsStore = ApiKeyStore &
  Pick<AccountStore, 'createAccount'> &
  Pick<UsageStore, 'getAccountLimits' | 'setAccountLimits'> &
  Pick<DeliveryStore, 'getWebhookSecrets' | 'rotateWebhookSecret'>;

export class AccountSettings {
  readonly #store: AccountSettingsStore;

  constructor(store: AccountSettingsStore) {
    this.#store = store;
  }

  /** The keys that work now, newest first. */
  activeKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return activeApiKeys(this.#store, accountId);
  }

  createKey(
    accountId: string,
    options: { name: string; environment: Environment; limits?: UsageLimits },
  ): Promise<CreatedKey> {
    return createApiKey(this.#store, { ...options, accountId });
  }

  /** The key as it was before its revocation; undefined when the account has no such active key. */
  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    return revokeActiveApiKey(this.#store, accountId, keyId);
  }

  rotateKey(accountId: string, keyId: string, graceMs: number) {
    return rotateApiKey(this.#store, accountId, keyId, graceMs);
  }

  setKeyLimits(accountId: string, keyId: string, changes: Partial<PublicLimits>) {
    return setApiKeyLimits(this.#store, keyId, changes, accountId);
  }

  limits(accountId: string): Promise<UsageLimits | undefined> {
    return accountLimits(this.#store, accountId);
  }

  setLimits(accountId: string, changes: Partial<PublicLimits>): Promise<UsageLimits | undefined> {
    return setAccountLimits(this.#store, accountId, changes);
  }

  webhookSecrets(accountId: string): Promise<WebhookSecrets> {
    return webhookSecrets(this.#store, accountId);
  }

  async rotateWebhookSecret(accountId: string): Promise<void> {
    await rotateWebhookSecret(this.#store, accountId);
  }
}
