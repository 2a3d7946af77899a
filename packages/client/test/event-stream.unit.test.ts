/** The Server-Sent Events parser on its own: line endings, chunk boundaries, comments and multi-line data. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEventStream, type ServerSentEvent } from '../src/index.js';

function streamOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(chunks: readonly (string | Uint8Array)[]): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of parseEventStream(streamOf(chunks))) events.push(event);
  return events;
}

describe('parseEventStream', () => {
  it('reads named events with ids, skipping comments', async () => {
    const events = await collect([
      'event: task\nid: 1\ndata: {"progress":0}\n\n',
      ': keep-alive\n\n',
      'event: task\nid: 2\ndata: {"progress":35}\n\n',
    ]);
    assert.deepEqual(events, [
      { event: 'task', id: '1', data: '{"progress":0}', retry: undefined },
      { event: 'task', id: '2', data: '{"progress":35}', retry: undefined },
    ]);
  });

  it('handles CRLF and CR line endings split across chunks', async () => {
    const events = await collect(['data: one\r', '\n\r', '\ndata: two\r\r', 'data:three\n', '\n']);
    assert.deepEqual(
      events.map((event) => event.data),
      ['one', 'two', 'three'],
    );
  });

  it('joins data lines, defaults the event name, keeps the last id and reads retry', async () => {
    const events = await collect(['id: 7\nretry: 3000\ndata: a\ndata:  b\n\n', 'data: c\nunknown: x\n\n']);
    assert.deepEqual(events, [
      { event: 'message', id: '7', data: 'a\n b', retry: 3000 },
      { event: 'message', id: '7', data: 'c', retry: undefined },
    ]);
  });

  it('keeps a CR at the end of a chunk paired with the LF after an empty chunk', async () => {
    // CR | (nothing) | LF is one line ending, not two: the event keeps its name.
    const events = await collect(['event: task\r', new Uint8Array(0), '\ndata: x\r', '', '\n\r\n']);
    assert.deepEqual(events, [{ event: 'task', id: undefined, data: 'x', retry: undefined }]);
  });

  it('decodes UTF-8 split inside a character, drops a BOM and an unfinished last event', async () => {
    const bytes = new TextEncoder().encode('\uFEFFdata: café ☕\n\ndata: cut off');
    const events = await collect([bytes.subarray(0, 14), bytes.subarray(14)]);
    assert.deepEqual(
      events.map((event) => event.data),
      ['café ☕'],
    );
  });
});
