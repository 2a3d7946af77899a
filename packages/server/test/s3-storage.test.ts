import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { MAX_PRESIGN_SECONDS, openS3Storage, parseS3Url, S3Storage } from '../src/storage/s3-storage.js';
import { type S3TestServer, startS3Server } from './helpers/s3-server.js';
import { serverEnv, startServer } from './helpers/server-process.js';
import { storageConformance } from './storage-conformance.js';

let s3: S3TestServer;
let client: S3Client;
let dir: string;
let prefixes = 0;
const clients: S3Client[] = [];

before(async () => {
  s3 = await startS3Server();
  client = new S3Client(s3.clientConfig);
  dir = await mkdtemp(join(tmpdir(), 'videogen-s3-'));
});
after(async () => {
  client.destroy();
  for (const other of clients) other.destroy();
  await s3.close();
  await rm(dir, { recursive: true, force: true });
});

storageConformance(
  'S3Storage',
  async () => new S3Storage({ bucket: s3.bucket, prefix: `conformance-${++prefixes}`, client }),
);

async function sourceFile(content: Buffer): Promise<string> {
  const path = join(dir, `source-${randomBytes(6).toString('hex')}`);
  await writeFile(path, content);
  return path;
}

/** Every key in the test bucket under `prefix`, sorted. */
async function keysUnder(prefix: string): Promise<string[]> {
  const listing = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (listing.Contents ?? []).map((object) => object.Key ?? '').sort();
}

/** Sets environment variables (undefined unsets) for the duration of `run`. */
async function withEnv(vars: Record<string, string | undefined>, run: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(vars);
  try {
    await run();
  } finally {
    apply(saved);
  }
}

describe('parseS3Url', () => {
  it('reads the bucket, the prefix and the addressing style', () => {
    const cases: Array<[string, { bucket: string; prefix: string; forcePathStyle: boolean }]> = [
      ['s3://videos', { bucket: 'videos', prefix: '', forcePathStyle: false }],
      ['s3://videos/', { bucket: 'videos', prefix: '', forcePathStyle: false }],
      ['s3://videos/videogen', { bucket: 'videos', prefix: 'videogen', forcePathStyle: false }],
      ['s3://my.videos-1/a/b/', { bucket: 'my.videos-1', prefix: 'a/b', forcePathStyle: false }],
      ['s3://videos/my%20prefix', { bucket: 'videos', prefix: 'my prefix', forcePathStyle: false }],
      ['s3://videos?force_path_style=true', { bucket: 'videos', prefix: '', forcePathStyle: true }],
      ['s3://videos/p?force_path_style=false', { bucket: 'videos', prefix: 'p', forcePathStyle: false }],
    ];
    for (const [url, expected] of cases) assert.deepEqual(parseS3Url(url), expected, url);
  });

  it('refuses what is no bucket and prefix, saying why', () => {
    const cases: Array<[string, RegExp]> = [
      ['file:///var/videos', /starts with s3:\/\//],
      ['videos', /looks like s3:\/\/bucket/],
      ['s3://', /no S3 bucket name/],
      ['s3:///prefix', /no S3 bucket name/],
      ['s3://Videos', /no S3 bucket name/],
      ['s3://ab', /no S3 bucket name/],
      ['s3://under_score', /no S3 bucket name/],
      ['s3://videos:9000/p', /set AWS_ENDPOINT_URL_S3/],
      ['s3://videos/a//b', /no valid key prefix/],
      ['s3://videos/a/../b', /no valid key prefix/],
      ['s3://videos/.hidden', /no valid key prefix/],
      ['s3://videos/%ff', /percent-encoded/],
      ['s3://videos#x', /fragment/],
      ['s3://videos?region=eu-west-1', /unknown S3 storage URL parameter "region"/],
      ['s3://videos?force_path_style=yes', /true or false/],
    ];
    for (const [url, problem] of cases) assert.throws(() => parseS3Url(url), problem, url);
  });

  it('never repeats credentials put in the URL', () => {
    assert.throws(
      () => parseS3Url('s3://AKIAEXAMPLE:hunter2@videos/p'),
      (error: Error) => /carries no credentials/.test(error.message) && !/hunter2|AKIA/.test(error.message),
    );
  });
});

describe('S3Storage', () => {
  it('keeps keys under its prefix, apart from other prefixes', async () => {
    const id = randomBytes(4).toString('hex');
    const tenantA = new S3Storage({ bucket: s3.bucket, prefix: `layout-${id}/a/videos`, client });
    const tenantB = new S3Storage({ bucket: s3.bucket, prefix: `layout-${id}/b`, client });
    const key = 'results/task-unified-A.mp4';
    await tenantA.putFile(key, await sourceFile(Buffer.from('for a')), 'video/mp4');
    await tenantB.putFile(key, await sourceFile(Buffer.from('for b, longer')), 'video/mp4');
    assert.deepEqual(await keysUnder(`layout-${id}/`), [
      `layout-${id}/a/videos/results/task-unified-A.mp4`,
      `layout-${id}/b/results/task-unified-A.mp4`,
    ]);
    assert.equal((await tenantA.stat(key))?.size, 5);
    assert.equal((await tenantB.stat(key))?.size, 13);
    await tenantA.delete(key);
    assert.equal(await tenantA.stat(key), undefined);
    assert.deepEqual(await keysUnder(`layout-${id}/`), [`layout-${id}/b/results/task-unified-A.mp4`]);

    // Without a prefix the key is the object's name.
    const bare = new S3Storage({ bucket: s3.bucket, client });
    const bareKey = `bare-${id}/x.mp4`;
    await bare.putFile(bareKey, await sourceFile(Buffer.from('bare')), 'video/mp4');
    assert.deepEqual(await keysUnder(`bare-${id}/`), [bareKey]);
  });

  it('refuses an invalid prefix or an empty bucket', () => {
    assert.throws(() => new S3Storage({ bucket: s3.bucket, prefix: '/abs', client }), /Invalid storage key/);
    assert.throws(() => new S3Storage({ bucket: s3.bucket, prefix: 'a/', client }), /Invalid storage key/);
    assert.throws(() => new S3Storage({ bucket: '', client }), /needs a bucket/);
  });

  it('checks that its bucket is there', async () => {
    await new S3Storage({ bucket: s3.bucket, client }).checkBucket();
    await assert.rejects(
      new S3Storage({ bucket: 'no-such-bucket', client }).checkBucket(),
      /"no-such-bucket" does not exist/,
    );
  });

  it('fails a put, and keeps nothing, when the store keeps aws-chunked framing as content', async () => {
    // s3rver does not decode the aws-chunked uploads that the SDK sends by default.
    const chunked = new S3Client({
      ...s3.clientConfig,
      requestChecksumCalculation: 'WHEN_SUPPORTED',
      responseChecksumValidation: 'WHEN_SUPPORTED',
    });
    clients.push(chunked);
    const storage = new S3Storage({ bucket: s3.bucket, prefix: 'chunked', client: chunked });
    const key = `results/${randomBytes(4).toString('hex')}.mp4`;
    await assert.rejects(
      storage.putFile(key, await sourceFile(randomBytes(100_000)), 'video/mp4'),
      /kept \d+ bytes for the 100000-byte object .*AWS_REQUEST_CHECKSUM_CALCULATION=when_required/,
    );
    assert.equal(await storage.stat(key), undefined);
  });
});

describe('S3Storage with two writers of one key', () => {
  it("keeps the other writer's object when it lands between this put and its check", async () => {
    // Two runs of one task (the first lost its lease) store the same result key: the later must win, and the
    // earlier must neither fail nor delete it.
    const key = `results/${randomBytes(4).toString('hex')}.mp4`;
    const other = new S3Storage({ bucket: s3.bucket, prefix: 'race', client });
    const otherBytes = randomBytes(70_000);
    const otherFile = await sourceFile(otherBytes);
    let raced = false;
    const racing: S3Client = Object.create(client);
    racing.send = (async (command: Parameters<S3Client['send']>[0]) => {
      const answer = await client.send(command as PutObjectCommand);
      if (command instanceof PutObjectCommand && !raced) {
        raced = true;
        await other.putFile(key, otherFile, 'video/mp4');
      }
      return answer;
    }) as S3Client['send'];
    const first = new S3Storage({ bucket: s3.bucket, prefix: 'race', client: racing });
    await first.putFile(key, await sourceFile(randomBytes(100_000)), 'video/mp4');
    assert.ok(raced);
    assert.equal((await first.stat(key))?.size, 70_000);
    const stored = Buffer.concat(await (await first.read(key)).toArray());
    assert.ok(stored.equals(otherBytes), "the later writer's video is there, whole");
  });
});

describe('S3Storage ranges from a store that ignores Range', () => {
  // HTTP allows it: the whole object, 200, whatever the Range header asked for.
  const content = randomBytes(100_000);
  const server = createServer((request, response) => {
    response.writeHead(200, {
      'content-type': 'video/mp4',
      'content-length': content.length,
      'last-modified': new Date().toUTCString(),
    });
    response.end(request.method === 'HEAD' ? undefined : content);
  });
  let storage: S3Storage;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const ignoring = new S3Client({ ...s3.clientConfig, endpoint: `http://127.0.0.1:${port}` });
    clients.push(ignoring);
    storage = new S3Storage({ bucket: s3.bucket, client: ignoring });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function bytesOf(stream: Readable): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }

  it('cuts the range asked for out of the whole object', async () => {
    for (const [start, end] of [
      [0, 0],
      [1, 65_536],
      [99_999, 99_999],
      [50_000, 200_000],
    ] as const) {
      const got = await bytesOf(await storage.read('a.mp4', { start, end }));
      assert.ok(got.equals(content.subarray(start, end + 1)), `${start}-${end}`);
    }
    await assert.rejects(storage.read('a.mp4', { start: 100_000, end: 100_001 }), RangeError);
  });
});

describe('S3Storage presigned URLs', () => {
  let storage: S3Storage;
  let content: Buffer;
  const key = 'results/task-unified-presigned.mp4';

  before(async () => {
    storage = new S3Storage({ bucket: s3.bucket, prefix: 'presigned', client });
    content = randomBytes(300_000);
    await storage.putFile(key, await sourceFile(content), 'video/mp4');
  });

  it('fetch with no credentials gets the exact bytes and type, whole or by range', async () => {
    const url = await storage.presignedUrl(key, { expiresInSeconds: 3600 });
    assert.ok(
      url.startsWith(`${s3.endpoint}/${s3.bucket}/presigned/results/task-unified-presigned.mp4?`),
      url,
    );

    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'video/mp4');
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(content));

    const part = await fetch(url, { headers: { Range: 'bytes=1000-1999' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${content.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(content.subarray(1000, 2000)));

    const tail = await fetch(url, { headers: { Range: `bytes=${content.length - 10}-` } });
    assert.equal(tail.status, 206);
    assert.ok(Buffer.from(await tail.arrayBuffer()).equals(content.subarray(content.length - 10)));
  });

  it('gives the same URL for the same signing time, so a caller rounding it to the hour gets one per hour', async () => {
    const hour = 3600_000;
    const signedAt = new Date(Math.floor(Date.now() / hour) * hour);
    const options = { expiresInSeconds: 2 * 3600, signedAt };
    const first = await storage.presignedUrl(key, options);
    assert.equal(
      await storage.presignedUrl(key, { ...options, signedAt: new Date(signedAt.getTime()) }),
      first,
    );
    // SigV4 times are whole seconds.
    assert.equal(
      await storage.presignedUrl(key, { ...options, signedAt: new Date(signedAt.getTime() + 999) }),
      first,
    );
    assert.notEqual(
      await storage.presignedUrl(key, { ...options, signedAt: new Date(signedAt.getTime() - hour) }),
      first,
    );
    assert.notEqual(await storage.presignedUrl(key, { expiresInSeconds: 3 * 3600, signedAt }), first);

    const query = new URL(first).searchParams;
    assert.equal(query.get('X-Amz-Date'), signedAt.toISOString().replace(/[-:]|\.\d{3}/g, ''));
    assert.equal(query.get('X-Amz-Expires'), '7200');
    const fetched = await fetch(first);
    assert.equal(fetched.status, 200);
    await fetched.arrayBuffer();
  });

  it('is refused by the store once expired', async () => {
    const now = Date.now();
    const expired = await storage.presignedUrl(key, {
      expiresInSeconds: 3600,
      signedAt: new Date(now - 2 * 3600_000),
    });
    const refused = await fetch(expired);
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /Request has expired/);

    const stillValid = await storage.presignedUrl(key, {
      expiresInSeconds: 3600,
      signedAt: new Date(now - 1800_000),
    });
    const accepted = await fetch(stillValid);
    assert.equal(accepted.status, 200);
    await accepted.arrayBuffer();
  });

  it('lasts from one second to seven days', async () => {
    for (const expiresInSeconds of [0, -1, 1.5, MAX_PRESIGN_SECONDS + 1, Number.NaN]) {
      await assert.rejects(
        storage.presignedUrl(key, { expiresInSeconds }),
        RangeError,
        String(expiresInSeconds),
      );
    }
    await assert.rejects(
      storage.presignedUrl(key, { expiresInSeconds: 60, signedAt: new Date(Number.NaN) }),
      RangeError,
    );
    const week = await storage.presignedUrl(key, { expiresInSeconds: MAX_PRESIGN_SECONDS });
    assert.equal(new URL(week).searchParams.get('X-Amz-Expires'), '604800');
    await assert.rejects(storage.presignedUrl('../x.mp4', { expiresInSeconds: 60 }), /Invalid storage key/);
  });
});

describe('openS3Storage', () => {
  // Only what the SDK reads itself: nothing from ~/.aws, credentials and endpoint from the environment.
  const isolated = {
    AWS_CONFIG_FILE: '/nonexistent/videogen-test/config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/videogen-test/credentials',
    AWS_PROFILE: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_ENDPOINT_URL: undefined,
    AWS_ENDPOINT_URL_S3: undefined,
    AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: undefined,
    AWS_DEFAULT_REGION: undefined,
    AWS_REGION: 'us-east-1',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'when_required',
  };

  for (const variable of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const) {
    it(`takes the endpoint from ${variable}, credentials and region from the SDK's chain`, async () => {
      await withEnv(
        {
          ...isolated,
          [variable]: s3.endpoint,
          AWS_ACCESS_KEY_ID: s3.accessKeyId,
          AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        },
        async () => {
          const prefix = `from-env-${randomBytes(4).toString('hex')}`;
          const storage = openS3Storage(`s3://${s3.bucket}/${prefix}/`);
          assert.equal(storage.bucket, s3.bucket);
          assert.equal(storage.prefix, prefix);
          const content = randomBytes(50_000);
          await storage.putFile('results/a.mp4', await sourceFile(content), 'video/mp4');
          assert.equal((await storage.stat('results/a.mp4'))?.size, content.length);
          assert.deepEqual(await keysUnder(`${prefix}/`), [`${prefix}/results/a.mp4`]);
          const url = await storage.presignedUrl('results/a.mp4', { expiresInSeconds: 600 });
          assert.ok(url.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}/results/a.mp4?`), url);
          assert.match(url, /X-Amz-Credential=S3RVER%2F\d{8}%2Fus-east-1%2Fs3%2Faws4_request/);
          const response = await fetch(url);
          assert.ok(Buffer.from(await response.arrayBuffer()).equals(content));
        },
      );
    });
  }

  it('addresses the bucket by path only when the URL asks', async () => {
    await withEnv(
      {
        ...isolated,
        AWS_ENDPOINT_URL_S3: 'http://objects.example.test:9000',
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'secret',
      },
      async () => {
        const options = { expiresInSeconds: 60, signedAt: new Date(0) };
        const virtual = await openS3Storage('s3://videos/p').presignedUrl('x.mp4', options);
        assert.ok(virtual.startsWith('http://videos.objects.example.test:9000/p/x.mp4?'), virtual);
        const path = await openS3Storage('s3://videos/p?force_path_style=true').presignedUrl(
          'x.mp4',
          options,
        );
        assert.ok(path.startsWith('http://objects.example.test:9000/videos/p/x.mp4?'), path);
      },
    );
  });
});

describe('videogen serve on S3 storage', () => {
  it("prints no NodeVersionSupportWarning, the AWS SDK's notice about Node.js versions older than 22", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'videogen-s3-serve-'));
    // The variables of the storage and the SDK only: none that would turn the warning off from outside.
    const server = await startServer(
      serverEnv(dataDir, {
        VIDEOGEN_STORAGE_URL: `s3://${s3.bucket}/serve?force_path_style=true`,
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        AWS_CONFIG_FILE: '/nonexistent/videogen-test/config',
        AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/videogen-test/credentials',
        AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required',
      }),
    );
    try {
      // Serving means the storage opened: its bucket was checked over the SDK's client.
      assert.match(server.stdout(), /"msg":"videogen is serving"/);
    } finally {
      assert.equal(await server.stop(), 0);
      await rm(dataDir, { recursive: true, force: true });
    }
    assert.doesNotMatch(server.stderr(), /NodeVersionSupportWarning/, server.stderr());
  });
});
