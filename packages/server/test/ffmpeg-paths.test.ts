import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MODULE = new URL('../src/media/ffmpeg-paths.js', import.meta.url).href;
const PRINT = `import(${JSON.stringify(MODULE)}).then((m) => console.log(JSON.stringify([m.ffmpegPath(), m.ffprobePath()])))`;

async function pathsWith(env: Record<string, string>): Promise<[string, string]> {
  const { stdout } = await run(process.execPath, ['-e', PRINT], { env: { PATH: process.env.PATH, ...env } });
  return JSON.parse(stdout) as [string, string];
}

describe('ffmpeg and ffprobe paths', () => {
  it('come from the npm packages by default', async () => {
    const [ffmpeg, ffprobe] = await pathsWith({});
    assert.match(ffmpeg, /@ffmpeg-installer/);
    assert.match(ffprobe, /@ffprobe-installer/);
    assert.ok(existsSync(ffmpeg) && existsSync(ffprobe));
  });

  it('follow VIDEOGEN_FFMPEG_PATH and VIDEOGEN_FFPROBE_PATH', async () => {
    const [ffmpeg, ffprobe] = await pathsWith({
      VIDEOGEN_FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg',
      VIDEOGEN_FFPROBE_PATH: '/opt/ffmpeg/bin/ffprobe',
    });
    assert.equal(ffmpeg, '/opt/ffmpeg/bin/ffmpeg');
    assert.equal(ffprobe, '/opt/ffmpeg/bin/ffprobe');
  });
});
