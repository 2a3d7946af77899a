/**
 * When to stop a long answer (an event stream, a `Prefer: wait`): when its client goes away, or when the
 * server starts closing, so that neither keeps polling for nobody nor holds a shutdown up.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

const closingSignals = new WeakMap<FastifyInstance, AbortSignal>();

/**
 * Fires when `app` starts closing (its preClose hooks run before the server waits for open answers to end).
 * One per instance, however many routes ask.
 */
export function closingSignal(app: FastifyInstance): AbortSignal {
  let signal = closingSignals.get(app);
  if (!signal) {
    const controller = new AbortController();
    app.addHook('preClose', (done) => {
      controller.abort();
      done();
    });
    signal = controller.signal;
    closingSignals.set(app, signal);
  }
  return signal;
}

/**
 * Fires when the response closes (the client disconnected, or the answer ended), `closing` fires, or
 * `timeoutMs` passes. The response's 'close' is the one to watch, not the request's: since Node 16 a request
 * emits 'close' as soon as its body has been read, which for a POST is before the answer starts.
 *
 * Plain timers and listeners, not `AbortSignal.any` or `AbortSignal.timeout`: Node holds the sources of a
 * composite signal weakly, and a timeout signal nothing else references can be collected before it fires
 * (seen here: a 1 s wait that lasted the whole render).
 */
export function answerSignal(reply: FastifyReply, closing: AbortSignal, timeoutMs?: number): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const onClosing = () => {
    closeConnectionAfter(reply);
    abort();
  };
  if (closing.aborted) onClosing();
  else closing.addEventListener('abort', onClosing, { once: true });
  const timer = timeoutMs === undefined ? undefined : setTimeout(abort, timeoutMs);
  // Every response closes once, ended or cut off: the timer and the listener on the long-lived `closing`
  // go with it.
  const onClose = () => {
    clearTimeout(timer);
    closing.removeEventListener('abort', onClosing);
    abort();
  };
  // The client may have gone already (during authentication, say): then 'close' has been and gone.
  if (reply.raw.closed) onClose();
  else reply.raw.once('close', onClose);
  return controller.signal;
}

/**
 * Lets the server finish closing once this answer is given. `server.close()` closes only the connections idle
 * when it is called; a keep-alive connection whose answer ends afterwards would stay open (and hold the close
 * up) until its keep-alive timeout, over a minute.
 */
function closeConnectionAfter(reply: FastifyReply): void {
  const response = reply.raw;
  if (!response.headersSent) {
    response.setHeader('connection', 'close');
    return;
  }
  // Too late to say so in a header: end the connection once the answer is out. The response lets go of its
  // socket when it finishes, so hold on to it now.
  const socket = response.socket;
  response.once('finish', () => socket?.end());
}
