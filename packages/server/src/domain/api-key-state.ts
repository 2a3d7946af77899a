/** When an API key works: the one rule the store's lookups, the dashboard and the CLI all read keys by. */
export interface ApiKeyLifetime {
  /** Epoch ms; null while not revoked. */
  readonly revokedAt: number | null;
  /** Epoch ms: the end of a rotated key's grace period; null for a key without an end. */
  readonly expiresAt: number | null;
}

/** Whether the key works at `now`: not revoked, and not past a rotation's grace period. */
export function isActiveApiKey(key: ApiKeyLifetime, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}
