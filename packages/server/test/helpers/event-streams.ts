/**
 * Reading task event streams in tests: as raw text parsed by the SSE rules (every field, every comment), and
 * with the standard `EventSource` client (the `eventsource` package), which reconnects with `Last-Event-ID` as
 * browsers do.
 */
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import type { PublicTask } from '../../src/domain/task.js';

export interface SseEvent {
  event?: string;
  id?: string;
  data?: string;
}

export interface Stream {
  response: Response;
  events: SseEvent[];
  comments: string[];
  /** Resolves when the server ends the stream (rejects when it is cut off). */
  ended: Promise<void>;
}

/** Opens an event stream with fetch and parses it as it arrives. */
export async function openStream(
  url: string,
  key: string | undefined,
  signal?: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Stream> {
  const response = await fetch(url, {
    headers: key ? { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers } : headers,
    signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line);
          const match = /^(event|id|data): ?(.*)$/.exec(line);
          if (match) event[match[1] as 'event' | 'id' | 'data'] = match[2];
        }
        if (event.event || event.data) events.push(event);
        end = buffer.indexOf('\n\n');
      }
    }
    assert.equal(buffer, '', 'the stream ended in the middle of an event');
  })();
  return { response, events, comments, ended };
}

export const tasksOf = (stream: Stream) =>
  stream.events.map((event) => JSON.parse(event.data ?? '') as PublicTask);

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A value of the server's /metrics (0 when the series is absent). */
export async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

export interface Followed {
  readonly source: EventSource;
  /** Each `task` event as the client dispatched it: its `lastEventId` and its task. */
  readonly events: { readonly id: string; readonly task: PublicTask }[];
  /** Each request the client made (the first and its reconnections): the `Last-Event-ID` sent, the status answered. */
  readonly requests: { readonly lastEventId: string | undefined; readonly status: number }[];
  /** Resolves when the client has given up for good (`readyState` CLOSED), as after a `204`. */
  readonly closed: Promise<void>;
}

/** Follows a task's event stream with `EventSource`, authenticated with `key`. Call `source.close()` when done. */
export function follow(url: string, key: string): Followed {
  const events: { id: string; task: PublicTask }[] = [];
  const requests: { lastEventId: string | undefined; status: number }[] = [];
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const response = await fetch(input, {
        ...init,
        headers: { ...init.headers, authorization: `Bearer ${key}` },
      });
      requests.push({ lastEventId: init.headers['Last-Event-ID'], status: response.status });
      return response;
    },
  });
  source.addEventListener('task', (event) => {
    events.push({ id: event.lastEventId, task: JSON.parse(event.data) as PublicTask });
  });
  const closed = new Promise<void>((resolve) => {
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) resolve();
    });
  });
  return { source, events, requests, closed };
}
