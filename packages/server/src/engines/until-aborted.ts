/** Racing an engine's work against its abort signal, so a render rejects at once however busy it is. */

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The render was aborted.', 'AbortError');
}

/** Settles with `work`, or rejects as soon as `signal` aborts, whichever is first. */
export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
