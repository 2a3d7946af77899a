/**
 * An upload's content type comes from its content (its signature, with the kind ffprobe found settling MP4 and
 * WebM), never from the type the client declared: `application/octet-stream` from the SDK, or a wrong one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { uploadContentType } from '../src/assets/upload-content-type.js';
import type { UploadKind } from '../src/domain/uploaded-file.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const run = promisify(execFile);

async function ffmpeg(args: string[]): Promise<void> {
  await run(ffmpegPath(), ['-v', 'error', '-nostdin', '-y', ...args]);
}

const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=1'];
const pattern = ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=1'];

describe('uploadContentType', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-content-type-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const files: { name: string; kind: UploadKind; type: string; write: (path: string) => Promise<void> }[] = [
    { name: 'a.png', kind: 'image', type: 'image/png', write: (p) => image(p) },
    { name: 'a.jpg', kind: 'image', type: 'image/jpeg', write: (p) => image(p) },
    { name: 'a.webp', kind: 'image', type: 'image/webp', write: (p) => image(p) },
    {
      name: 'a.gif',
      kind: 'image',
      type: 'image/gif',
      write: (p) => ffmpeg([...pattern, '-frames:v', '1', p]),
    },
    { name: 'a.mp4', kind: 'video', type: 'video/mp4', write: (p) => writeTestVideo(p, { seconds: 1 }) },
    {
      name: 'a.mov',
      kind: 'video',
      type: 'video/quicktime',
      write: (p) => writeTestVideo(p, { seconds: 1 }),
    },
    {
      name: 'a.webm',
      kind: 'video',
      type: 'video/webm',
      write: (p) => ffmpeg([...pattern, '-c:v', 'libvpx', p]),
    },
    { name: 'a.wav', kind: 'audio', type: 'audio/wav', write: (p) => writeTestAudio(p) },
    { name: 'a.mp3', kind: 'audio', type: 'audio/mpeg', write: (p) => writeTestAudio(p) },
    { name: 'a.m4a', kind: 'audio', type: 'audio/mp4', write: (p) => writeTestAudio(p) },
    { name: 'a.aac', kind: 'audio', type: 'audio/aac', write: (p) => ffmpeg([...tone, '-c:a', 'aac', p]) },
    {
      name: 'a.ogg',
      kind: 'audio',
      type: 'audio/ogg',
      write: (p) => ffmpeg([...tone, '-c:a', 'libvorbis', p]),
    },
    {
      name: 'a.opus.webm',
      kind: 'audio',
      type: 'audio/webm',
      write: (p) => ffmpeg([...tone, '-c:a', 'libopus', p]),
    },
    { name: 'a.flac', kind: 'audio', type: 'audio/flac', write: (p) => ffmpeg([...tone, p]) },
    // An MP4 holding only sound is audio, by the kind its content was found to be.
    {
      name: 'sound.mp4',
      kind: 'audio',
      type: 'audio/mp4',
      write: (p) => ffmpeg([...tone, '-c:a', 'aac', p]),
    },
    // MPEG-TS has no signature the sniffer knows.
    {
      name: 'a.ts',
      kind: 'video',
      type: 'application/octet-stream',
      write: (p) => writeTestVideo(p, { seconds: 1 }),
    },
    // A signature of another kind than the content was found to be is not trusted.
    { name: 'b.png', kind: 'audio', type: 'application/octet-stream', write: (p) => image(p) },
  ];

  function image(path: string): Promise<void> {
    return writeTestImage(path, { width: 64, height: 48, colour: [10, 120, 200] });
  }

  for (const { name, kind, type, write } of files) {
    it(`${name} (${kind}) is ${type}`, async () => {
      const path = join(dir, name);
      await write(path);
      assert.equal(await uploadContentType(path, kind), type);
    });
  }
});

describe('POST /v1/files stores and serves the detected type', () => {
  let server: TestService;
  let key: string;
  before(async () => {
    server = await startTestService();
    key = (await server.newKey()).key;
  });
  after(() => server?.close());

  it('a PNG the SDK sends as application/octet-stream is image/png', async () => {
    const path = join(server.dataDir, 'photo.png');
    await writeTestImage(path, { width: 64, height: 48, colour: [200, 30, 30] });
    const form = new FormData();
    form.append('file', new Blob([await readFile(path)], { type: 'application/octet-stream' }), 'photo.png');
    const uploaded = await fetch(`${server.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    assert.equal(uploaded.status, 200);
    const file = (await uploaded.json()) as { content_type: string; url: string };
    assert.equal(file.content_type, 'image/png');
    const content = await fetch(file.url, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(content.headers.get('content-type'), 'image/png');
    await content.arrayBuffer();
  });
});
