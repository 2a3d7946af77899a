/**
 * The `CallbackVerifier` port: checks a provider's callback (a webhook it sends when a job changes, where the
 * engine asked for one) and says which upstream job it names. One per engine with `callbacks: true`, made by its
 * engine type's `callbacks.verifier` (engines/engine-type.ts); the use case (tasks/provider-callbacks.ts) finds
 * the job's task and wakes its poll. A delivery is only ever a hint: nothing in it but the job's id is used.
 */

/** A delivery to `POST /v1/provider-callbacks/{engine}`, as it came. */
export interface CallbackDelivery {
  /** The request's headers, their names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body's bytes, which signatures cover. */
  readonly body: Buffer;
}

export type CallbackVerdict =
  /** The delivery is the provider's (or, for a provider that signs nothing, names a job): its upstream id. */
  | { readonly kind: 'job'; readonly upstreamId: string }
  /** A signature missing, wrong, or of a time too far from now. */
  | { readonly kind: 'bad_signature'; readonly message: string }
  /** Signed as it should be (or unsigned by design), but not the delivery the provider sends. */
  | { readonly kind: 'bad_body'; readonly message: string }
  /** The provider's keys could not be had to check it (its API did not answer): it may be sent again. */
  | { readonly kind: 'unverifiable'; readonly message: string };

export interface CallbackVerifier {
  /** Never rejects: every outcome is a verdict. */
  verify(delivery: CallbackDelivery): Promise<CallbackVerdict>;
}
