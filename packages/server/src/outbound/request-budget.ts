/**
 * A budget of requests per second (a token bucket, as full as one second's worth), and the undici interceptor
 * that holds a request until the budget has room for it: an engine following thousands of jobs polls its
 * provider at this rate at most, however many are due, rather than into the provider's rate limit.
 */
import type { Dispatcher } from 'undici';

export class RequestBudget {
  #tokens: number;
  #last: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#tokens = perSecond;
    this.#last = now();
  }

  /** Takes one request's room if there is some (0), or says how many ms until there is (nothing taken). */
  take(): number {
    const at = this.now();
    this.#tokens = Math.min(this.perSecond, this.#tokens + ((at - this.#last) * this.perSecond) / 1000);
    this.#last = at;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) * 1000) / this.perSecond);
  }
}

/** Requests leave in the order they came, each when the budget has room. */
export function requestBudget(perSecond: number): Dispatcher.DispatcherComposeInterceptor {
  const budget = new RequestBudget(perSecond);
  const waiting: (() => void)[] = [];
  let scheduled = false;
  const drain = (): void => {
    while (waiting.length > 0) {
      const wait = budget.take();
      if (wait > 0) {
        if (!scheduled) {
          scheduled = true;
          setTimeout(() => {
            scheduled = false;
            drain();
          }, wait);
        }
        return;
      }
      waiting.shift()?.();
    }
  };
  return (dispatch) => (options, handler) => {
    waiting.push(() => dispatch(options, handler));
    drain();
    return true;
  };
}
