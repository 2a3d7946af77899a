/**
 * A Server-Sent Events parser over a fetch body, following the WHATWG event-stream format (lines ending in
 * CRLF, LF or CR; `event`, `data`, `id` and `retry` fields; `:` comments; an event dispatched at a blank
 * line). Reading the body with fetch rather than `EventSource` lets the request carry the API key in its
 * `Authorization` header, and works on every runtime that has fetch.
 */

export interface ServerSentEvent {
  /** `message` when the event named none. */
  readonly event: string;
  /** The data lines, joined with `\n`. */
  readonly data: string;
  /** The last event ID seen in the stream so far, if any. */
  readonly id: string | undefined;
  /** The reconnection delay the server asked for, in ms. */
  readonly retry: number | undefined;
}

interface PendingEvent {
  event: string;
  data: string[];
  retry: number | undefined;
}

/** Splits the stream into lines as they arrive, whatever their line endings, across chunk boundaries. */
class LineSplitter {
  private buffer = '';
  /** A chunk ended in CR: a LF opening the next chunk belongs to the same line ending. */
  private skipLeadingLineFeed = false;

  push(text: string): string[] {
    // An empty piece (an empty chunk, or one holding only part of a character) must not forget a pending CR.
    if (text === '') return [];
    let input = text;
    if (this.skipLeadingLineFeed && input.startsWith('\n')) input = input.slice(1);
    this.skipLeadingLineFeed = false;
    this.buffer += input;
    const lines: string[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      if (end === -1) break;
      const crAtEnd = this.buffer[end] === '\r' && end === this.buffer.length - 1;
      const width = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      lines.push(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + width);
      if (crAtEnd) this.skipLeadingLineFeed = true;
    }
    return lines;
  }
}

/** Yields the events of `body` until it ends. Cancelling the iteration (a `break`) cancels the body. */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const lines = new LineSplitter();
  let lastEventId: string | undefined;
  let pending: PendingEvent = { event: '', data: [], retry: undefined };
  let firstChunk = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let text = decoder.decode(value, { stream: true });
      if (firstChunk && text.length > 0) {
        if (text.startsWith('\uFEFF')) text = text.slice(1);
        firstChunk = false;
      }
      for (const line of lines.push(text)) {
        if (line === '') {
          if (pending.data.length > 0) {
            yield {
              event: pending.event || 'message',
              data: pending.data.join('\n'),
              id: lastEventId,
              retry: pending.retry,
            };
          }
          pending = { event: '', data: [], retry: undefined };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        switch (field) {
          case 'event':
            pending.event = value;
            break;
          case 'data':
            pending.data.push(value);
            break;
          case 'id':
            if (!value.includes('\0')) lastEventId = value;
            break;
          case 'retry':
            if (/^\d+$/.test(value)) pending.retry = Number(value);
            break;
          default:
            // Unknown fields are ignored, as the format says.
            break;
        }
      }
    }
    // An event not closed by a blank line when the stream ends is dropped, as the format says.
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
