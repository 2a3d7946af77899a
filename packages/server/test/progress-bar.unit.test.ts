/** The CLI's progress line on terminals of several widths: the task id is always there whole. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Task } from '@videogen/client';
import { type ProgressStream, progressBar } from '../src/cli/progress-bar.js';

const ID = 'task-unified-01JD7V3Q6M8Z5S9K2T4W6Y8A0C';

/** A terminal `columns` wide (or, with `isTTY` false, a pipe) that records what is written to it. */
function terminal(columns: number, isTTY = true): ProgressStream & { written: string } {
  const stream = {
    isTTY,
    columns,
    written: '',
    write(chunk: string | Uint8Array): boolean {
      stream.written += String(chunk);
      return true;
    },
  };
  return stream as ProgressStream & { written: string };
}

function task(status: Task['status'], progress: number): Task {
  return { id: ID, status, progress } as Task;
}

/** What the terminal shows: each redraw (`\r`, erase line) replaces the line it is on. */
function screen(written: string): string[] {
  const lines: string[] = [];
  for (const line of written.split('\n')) {
    const redraws = line.split('\r\x1b[2K');
    lines.push(redraws[redraws.length - 1] ?? '');
  }
  return lines;
}

describe('progressBar', () => {
  for (const columns of [80, 100, 120, 60, 40, 24]) {
    it(`shows the whole task id at ${columns} columns, and no line wider than the terminal`, () => {
      const stream = terminal(columns);
      const bar = progressBar(stream);
      for (const [status, progress] of [
        ['pending', 0],
        ['processing', 45],
        ['completed', 100],
      ] as const) {
        bar.update(task(status, progress));
        const shown = screen(stream.written).filter(Boolean);
        assert.ok(
          shown.some((line) => line.includes(ID)),
          `${columns} columns, ${status}: ${JSON.stringify(shown)}`,
        );
        assert.ok(shown.at(-1)?.includes(`${String(progress).padStart(3)}%  ${status}`), shown.at(-1));
        for (const line of shown) {
          if (line !== ID) assert.ok(line.length < Math.max(columns, 21), `${line.length}: ${line}`);
        }
      }
      bar.finish();
      assert.ok(stream.written.endsWith('\n'));
    });
  }

  it('keeps the id on the line, beside a narrower bar, on an 80-column terminal', () => {
    const stream = terminal(80);
    const bar = progressBar(stream);
    bar.update(task('processing', 50));
    const [line] = screen(stream.written);
    assert.ok(line?.endsWith(`  50%  processing  ${ID}`), line);
    assert.ok((line?.length ?? 0) <= 79, `${line?.length}`);
  });

  it('puts the id on a line of its own, once, when the terminal is too narrow for it beside the rest', () => {
    const stream = terminal(40);
    const bar = progressBar(stream);
    bar.update(task('pending', 0));
    bar.update(task('processing', 70));
    const shown = screen(stream.written);
    assert.equal(shown[0], ID);
    assert.equal(shown.filter((line) => line === ID).length, 1);
    assert.ok(shown[1]?.endsWith(' 70%  processing'), shown[1]);
    assert.ok((shown[1]?.length ?? 0) <= 39);
  });

  it('writes nothing where the stream is no terminal', () => {
    const stream = terminal(80, false);
    progressBar(stream).update(task('processing', 10));
    assert.equal(stream.written, '');
  });
});
