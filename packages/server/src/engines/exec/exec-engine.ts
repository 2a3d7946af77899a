/**
 * The `exec` engine: runs a command-line generator once per task, the way the Wan, LTX-Video and
 * HunyuanVideo repositories are used (`python generate.py --task t2v-14B --size {size_star} --prompt {prompt}
 * --save_file {output}`), then conforms the video it wrote. The command never goes through a shell: the
 * prompt is one argument whatever it contains.
 *
 * The command runs in its own process group, so that stopping it (abort, time limit) also stops what it
 * started: SIGTERM to the group, SIGKILL two seconds later if anything is left. What is left of the group
 * after a normal exit is stopped the same way. A guardian process, started with the command, stops the group
 * the same way if the worker dies (SIGKILL, a crash) while the command runs (group-guardian.ts).
 *
 * The video is taken from `{output}` (`<work dir>/raw.mp4`); for generators that only take a directory
 * (`--save-path {work_dir}`), from the newest video file written under the work directory instead.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readdir, stat } from 'node:fs/promises';
import { delimiter, dirname, extname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { jobVideoTarget } from '../job-video-target.js';
import { abortReason } from '../until-aborted.js';
import {
  type CommandTemplate,
  commandPlaceholders,
  fillCommand,
  parseCommand,
  placeholderValues,
  RAW_OUTPUT_NAME,
} from './command-template.js';
import type { ExecOptions } from './exec-options.js';
import { type GeneratorOptions, generatorFormat } from './generator-format.js';
import { OutputTail } from './output-tail.js';
import { endGroup, type GroupGuard, guardGroup, KILL_GRACE_MS } from './process-group.js';
import { ProgressParser } from './progress-parser.js';

const MAX_TIMER_MS = 2_147_483_647;
/** The share of the progress the command's own output drives; the rest is for conforming. */
const RUN_SHARE = 0.95;
/** Environment values at least this long are hidden if the command prints them (tokens, keys). */
const SECRET_MIN_CHARS = 6;
const VIDEO_EXTENSIONS = new Set(['.mp4', '.mov', '.mkv', '.webm', '.avi', '.gif']);
/** File times can be coarser than the clock; a video this much older than the start still counts. */
const MTIME_SLACK_MS = 2000;

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all. */
  readonly spawnError?: Error;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function isExecutableFile(path: string): Promise<'yes' | 'missing' | 'not a file' | 'not executable'> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return 'missing';
  if (!info.isFile()) return 'not a file';
  return access(path, constants.X_OK).then(
    () => 'yes',
    () => 'not executable',
  );
}

export class ExecEngine implements Engine {
  readonly #name: string;
  readonly #label: string;
  readonly #template: CommandTemplate;
  readonly #cwd: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #secrets: readonly string[];
  readonly #timeoutMs: number | undefined;
  readonly #ffmpegPath: string | undefined;
  readonly #generator: GeneratorOptions;
  /** The command takes `{generate_audio}`: its video's sound is kept when the job asks for sound. */
  readonly #makesSound: boolean;

  constructor(name: string, options: ExecOptions, context: EngineContext) {
    this.#name = name;
    this.#label = `exec engine "${name}"`;
    this.#template = parseCommand(options.command, this.#label);
    this.#makesSound = commandPlaceholders(this.#template).has('generate_audio');
    this.#cwd = resolve(context.baseDir, options.cwd ?? '.');
    // Python block-buffers a piped stdout, which would hold back printed progress until the end.
    this.#env = { PYTHONUNBUFFERED: '1', ...process.env, ...options.env };
    this.#secrets = Object.values(options.env ?? {}).filter((value) => value.length >= SECRET_MIN_CHARS);
    this.#timeoutMs = options.timeout_seconds === undefined ? undefined : options.timeout_seconds * 1000;
    this.#ffmpegPath = context.ffmpegPath;
    this.#generator = { sizes: options.sizes, fps: options.fps, frame_step: options.frame_step };
  }

  get name(): string {
    return this.#name;
  }

  /** Checks that the working directory exists and the program is an executable file (on PATH for a bare name). */
  async check(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const cwd = await stat(this.#cwd).catch(() => undefined);
    if (!cwd) throw new Error(`${this.#label}: the working directory ${this.#cwd} does not exist.`);
    if (!cwd.isDirectory())
      throw new Error(`${this.#label}: the working directory ${this.#cwd} is not a directory.`);
    const { program } = this.#template;
    if (program.includes('/')) {
      const path = resolve(this.#cwd, program);
      const state = await isExecutableFile(path);
      if (state === 'missing') throw new Error(`${this.#label}: the program ${path} does not exist.`);
      if (state !== 'yes') throw new Error(`${this.#label}: the program ${path} is ${state}.`);
    } else {
      const dirs = (this.#env.PATH ?? '').split(delimiter).map((dir) => resolve(this.#cwd, dir || '.'));
      const states = await Promise.all(dirs.map((dir) => isExecutableFile(join(dir, program))));
      if (!states.includes('yes')) {
        throw new Error(
          `${this.#label}: the program "${program}" was not found on PATH (${this.#env.PATH ?? ''}).`,
        );
      }
    }
    signal.throwIfAborted();
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    const { signal } = context;
    signal.throwIfAborted();
    const args = fillCommand(
      this.#template,
      placeholderValues(job, generatorFormat(job, this.#generator)),
      this.#label,
    );
    await mkdir(job.workDir, { recursive: true });
    await mkdir(dirname(job.outputPath), { recursive: true });
    const startedAt = Date.now();
    const exit = await this.#run(args, context);
    if (exit.code !== 0) throw this.#failure(exit);
    const raw = await this.#findOutput(job, startedAt);
    context.onProgress(RUN_SHARE);
    await conformVideo(raw, job.outputPath, jobVideoTarget(job, this.#makesSound), {
      signal,
      label: this.#label,
      ffmpegPath: this.#ffmpegPath,
    });
    context.onProgress(1);
  }

  /** Runs the command to its end; rejects on abort (with the signal's reason) and at the time limit. */
  async #run(
    args: readonly string[],
    context: RenderContext,
  ): Promise<Exit & { stderr: string; stdout: string }> {
    const { signal } = context;
    const limitMs = Math.min(this.#timeoutMs ?? Number.POSITIVE_INFINITY, context.deadline - Date.now());
    if (limitMs <= 0) throw this.#timeout(this.#timeoutMs !== undefined && this.#timeoutMs <= limitMs);
    const { program } = this.#template;
    let child: ChildProcess;
    try {
      child = spawn(program.includes('/') ? resolve(this.#cwd, program) : program, args, {
        cwd: this.#cwd,
        env: this.#env,
        detached: true,
        shell: false,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      throw new TaskFailure(
        'upstream_error',
        `${this.#label}: could not start ${program}: ${messageOf(error)}`,
        {
          cause: error,
        },
      );
    }
    const unguarded = (why: Error) =>
      new TaskFailure(
        'internal_error',
        `${this.#label}: ${program} was stopped because the guardian process that stops it if this worker dies ${why.message}.`,
        { cause: why },
      );
    // Guarded from the start: nothing else would stop the command if this process were killed.
    let guard: GroupGuard | undefined;
    if (child.pid !== undefined) {
      try {
        guard = guardGroup(child.pid);
      } catch (error) {
        await endGroup(child.pid);
        throw unguarded(new Error(`could not be started: ${messageOf(error)}`, { cause: error }));
      }
      // A pid means the command started; one that could not be spawned (ENOENT) has none.
      context.onAccepted?.();
    }
    const guardLost = guard?.lost ?? new Promise<never>(() => {});

    const parser = new ProgressParser();
    // Output can still arrive after a stop; progress reported then would come after the task's failure.
    let reporting = true;
    const tails = { stdout: new OutputTail(), stderr: new OutputTail() };
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]?.setEncoding('utf8');
      child[stream]?.on('data', (chunk: string) => {
        tails[stream].push(chunk);
        const fraction = parser.push(stream, chunk);
        if (reporting && fraction !== undefined) context.onProgress(fraction * RUN_SHARE);
      });
    }
    const exited = new Promise<Exit>((resolveExit) => {
      child.once('exit', (code, exitSignal) => resolveExit({ code, signal: exitSignal }));
      child.on('error', (error) => {
        // Without a pid the program never ran; other errors (a failed kill) come with an exit.
        if (child.pid === undefined) resolveExit({ code: null, signal: null, spawnError: error });
      });
    });
    const closed = new Promise<void>((resolveClose) => child.once('close', () => resolveClose()));

    let stopReason: 'abort' | 'timeout' | undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<undefined>((resolveStop) => {
      onAbort = () => {
        stopReason ??= 'abort';
        resolveStop(undefined);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      // Longer delays overflow setTimeout, which would then fire at once.
      if (limitMs <= MAX_TIMER_MS) {
        timer = setTimeout(() => {
          stopReason ??= 'timeout';
          resolveStop(undefined);
        }, limitMs);
      }
    });

    try {
      const first = await Promise.race([exited, stopped, guardLost]);
      const exit = first instanceof Error ? undefined : first;
      if (exit === undefined) reporting = false;
      if (exit?.spawnError) {
        throw new TaskFailure(
          'upstream_error',
          `${this.#label}: could not start ${program}: ${exit.spawnError.message}`,
          { cause: exit.spawnError },
        );
      }
      // On a stop this ends the command; after an exit, whatever it left running.
      if (child.pid !== undefined) await endGroup(child.pid);
      // Once the pipes close, every byte of output has been read.
      await Promise.race([closed, sleep(KILL_GRACE_MS)]);
      if (exit === undefined) {
        await Promise.race([exited, sleep(KILL_GRACE_MS)]);
        if (first instanceof Error) throw unguarded(first);
        if (stopReason === 'abort') throw abortReason(signal);
        throw this.#timeout(this.#timeoutMs !== undefined && this.#timeoutMs <= limitMs);
      }
      return { ...exit, stderr: tails.stderr.lines(), stdout: tails.stdout.lines() };
    } finally {
      reporting = false;
      // The group has been ended (or ended by itself): the guardian can go.
      guard?.release();
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  #timeout(ownLimit: boolean): TaskFailure {
    const limit = ownLimit
      ? `its timeout_seconds (${(this.#timeoutMs ?? 0) / 1000} s)`
      : "the task's time limit";
    return new TaskFailure(
      'timeout',
      `${this.#label}: ${this.#template.program} did not finish within ${limit} and was stopped.`,
    );
  }

  #failure(exit: Exit & { stderr: string; stdout: string }): TaskFailure {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    let tail = exit.stderr || exit.stdout;
    for (const secret of this.#secrets) tail = tail.split(secret).join('[redacted]');
    const message = `${this.#label}: ${this.#template.program} ${how}`;
    return new TaskFailure('upstream_error', tail ? `${message}: ${tail}` : `${message}.`);
  }

  /** `{output}`, or else the newest video file written under the work directory during the run. */
  async #findOutput(job: RenderJob, startedAt: number): Promise<string> {
    const expected = join(job.workDir, RAW_OUTPUT_NAME);
    let path: string | undefined = expected;
    let info = await stat(expected).catch(() => undefined);
    if (!info?.isFile()) {
      const taken = new Set([
        job.outputPath,
        ...[...job.images, ...job.videos, ...job.audios].map((a) => a.path),
      ]);
      const names = await readdir(job.workDir, { recursive: true }).catch(() => [] as string[]);
      path = undefined;
      info = undefined;
      for (const name of names) {
        const candidate = join(job.workDir, name);
        if (!VIDEO_EXTENSIONS.has(extname(name).toLowerCase()) || taken.has(candidate)) continue;
        const candidateInfo = await stat(candidate).catch(() => undefined);
        if (!candidateInfo?.isFile() || candidateInfo.mtimeMs < startedAt - MTIME_SLACK_MS) continue;
        if (!info || candidateInfo.mtimeMs > info.mtimeMs) {
          path = candidate;
          info = candidateInfo;
        }
      }
    }
    const program = this.#template.program;
    if (!path || !info) {
      throw new TaskFailure(
        'upstream_error',
        `${this.#label}: ${program} finished without writing a video ({output} or a video file under {work_dir}).`,
      );
    }
    if (info.size === 0)
      throw new TaskFailure('upstream_error', `${this.#label}: ${program} wrote an empty video file.`);
    return path;
  }
}
