/**
 * A stand-in for Wan 2.2's official `generate.py`, run by tests with `process.execPath` in place of
 * `python generate.py`. It parses, checks, logs and writes what the real script does, without a model:
 *
 * - Wan-Video/Wan2.2 @ 42bf4cfaa384bc21833865abc2f9e6c0e67233dc, `generate.py` (`_parse_args`, `_validate_args`,
 *   `generate`): argparse with its defaults (allow_abbrev: a unique prefix of an option is accepted; an
 *   unknown option, a value outside `choices` or of the wrong type exits 2 with `error:` on stderr), then
 *   assertions that exit 1 with an AssertionError (no `--ckpt_dir`; a size the task does not support).
 * - `wan/configs/__init__.py`: SIZE_CONFIGS (the `--size` choices, "W*H"), SUPPORTED_SIZES per task;
 *   `wan/configs/shared_config.py` and `wan_*.py`: frame_num 81 / 121, sample_fps 16 / 24, sample_steps 40 / 50.
 * - `wan/text2video.py`: the frame count is floored to 4n+1 (the VAE's temporal stride of 4), never checked;
 *   `wan/image2video.py`: i2v-A14B fails on a frame count that is not 4n+1 (a tensor view) and makes a video
 *   whose shape follows the image, with `--size`'s area (multiples of 16), not `--size` itself.
 * - `wan/utils/utils.py` `save_video`: libx264 MP4 at the task's fps; logging goes to stdout, the tqdm bar
 *   of the sampling steps to stderr.
 *
 * The picture is a flat colour: no test looks at it, and it is the cheapest to encode here and to conform
 * after (a moving test pattern at Wan's sizes doubles what conforming a clip costs).
 *
 * Limits of the fake: ti2v-5B with `--image` (its `best_output_size` path) and the s2v/animate tasks are not
 * modelled and exit 1 saying so; `--ckpt_dir` must exist, as loading the models would need. Environment:
 *   WAN_FAKE_FFMPEG   the ffmpeg binary (required), WAN_FAKE_FFPROBE  the ffprobe binary (for --image)
 *   WAN_FAKE_RECORD   a file to append one JSON line per run to: the parsed arguments and the video made
 *   WAN_FAKE_CACHE    a directory where made videos are kept by size, frames and fps, to copy next time
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const TASKS = ['t2v-A14B', 'i2v-A14B', 'ti2v-5B', 'animate-14B', 's2v-14B'];
const SIZE_CONFIGS = {
  '720*1280': [720, 1280],
  '1280*720': [1280, 720],
  '480*832': [480, 832],
  '832*480': [832, 480],
  '704*1280': [704, 1280],
  '1280*704': [1280, 704],
  '1024*704': [1024, 704],
  '704*1024': [704, 1024],
};
const SUPPORTED_SIZES = {
  't2v-A14B': ['720*1280', '1280*720', '480*832', '832*480'],
  'i2v-A14B': ['720*1280', '1280*720', '480*832', '832*480'],
  'ti2v-5B': ['704*1280', '1280*704'],
  'animate-14B': ['720*1280', '1280*720'],
};
const TASK_CONFIG = {
  't2v-A14B': { frameNum: 81, fps: 16, steps: 40 },
  'i2v-A14B': { frameNum: 81, fps: 16, steps: 40 },
  'ti2v-5B': { frameNum: 121, fps: 24, steps: 50 },
  'animate-14B': { frameNum: 77, fps: 30, steps: 20 },
  's2v-14B': { frameNum: 81, fps: 16, steps: 40 },
};

const str2bool = (value) => {
  const v = value.toLowerCase();
  if (['yes', 'true', 't', 'y', '1'].includes(v)) return true;
  if (['no', 'false', 'f', 'n', '0'].includes(v)) return false;
  throw new Error('Boolean value expected (True/False)');
};
const int = (value) => {
  if (!/^[-+]?\d+$/.test(value.trim())) throw new Error(`invalid int value: '${value}'`);
  return Number.parseInt(value, 10);
};
const float = (value) => {
  const n = Number(value);
  if (value.trim() === '' || Number.isNaN(n)) throw new Error(`invalid float value: '${value}'`);
  return n;
};
const text = (value) => value;

/** Every option of Wan 2.2's `_parse_args`: type, default, choices; `flag` for store_true. */
const OPTIONS = {
  task: { type: text, default: 't2v-A14B', choices: TASKS },
  size: { type: text, default: '1280*720', choices: Object.keys(SIZE_CONFIGS) },
  frame_num: { type: int, default: null },
  ckpt_dir: { type: text, default: null },
  offload_model: { type: str2bool, default: null },
  ulysses_size: { type: int, default: 1 },
  t5_fsdp: { flag: true },
  t5_cpu: { flag: true },
  dit_fsdp: { flag: true },
  save_file: { type: text, default: null },
  prompt: { type: text, default: null },
  use_prompt_extend: { flag: true },
  prompt_extend_method: { type: text, default: 'local_qwen', choices: ['dashscope', 'local_qwen'] },
  prompt_extend_model: { type: text, default: null },
  prompt_extend_target_lang: { type: text, default: 'zh', choices: ['zh', 'en'] },
  base_seed: { type: int, default: -1 },
  image: { type: text, default: null },
  sample_solver: { type: text, default: 'unipc', choices: ['unipc', 'dpm++'] },
  sample_steps: { type: int, default: null },
  sample_shift: { type: float, default: null },
  sample_guide_scale: { type: float, default: null },
  convert_model_dtype: { flag: true },
  src_root_path: { type: text, default: null },
  refert_num: { type: int, default: 77 },
  replace_flag: { flag: true },
  use_relighting_lora: { flag: true },
  num_clip: { type: int, default: null },
  audio: { type: text, default: null },
  enable_tts: { flag: true },
  tts_prompt_audio: { type: text, default: null },
  tts_prompt_text: { type: text, default: null },
  tts_text: { type: text, default: null },
  pose_video: { type: text, default: null },
  start_from_ref: { flag: true },
  infer_frames: { type: int, default: 80 },
};

function usageError(message) {
  process.stderr.write(`usage: generate.py [-h] [--task {${TASKS.join(',')}}] ...\n`);
  process.stderr.write(`generate.py: error: ${message}\n`);
  process.exit(2);
}

function traceback(error) {
  process.stderr.write(
    `Traceback (most recent call last):\n  File "generate.py", line 1, in <module>\n${error}\n`,
  );
  process.exit(1);
}

/** argparse's long-option matching: an exact name, else a unique prefix (allow_abbrev). */
function optionNamed(given) {
  if (given in OPTIONS) return given;
  const matches = Object.keys(OPTIONS).filter((name) => name.startsWith(given));
  if (matches.length > 1) {
    usageError(`ambiguous option: --${given} could match ${matches.map((m) => `--${m}`).join(', ')}`);
  }
  return matches[0];
}

function parseArgs(argv) {
  const args = Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.flag ? false : o.default]));
  const unrecognized = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === '-h' || token === '--help') {
      process.stdout.write('usage: generate.py [-h] ...\n');
      process.exit(0);
    }
    if (!token.startsWith('--')) {
      unrecognized.push(token);
      continue;
    }
    const [given, inline] = token.slice(2).split(/=(.*)/s);
    const name = optionNamed(given);
    if (!name) {
      unrecognized.push(token);
      continue;
    }
    const option = OPTIONS[name];
    if (option.flag) {
      if (inline !== undefined) usageError(`argument --${name}: ignored explicit argument '${inline}'`);
      args[name] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || (inline === undefined && value.startsWith('--'))) {
      usageError(`argument --${name}: expected one argument`);
    }
    let parsed;
    try {
      parsed = option.type(value);
    } catch (error) {
      usageError(`argument --${name}: ${error.message}`);
    }
    if (option.choices && !option.choices.includes(parsed)) {
      usageError(`argument --${name}: invalid choice: '${value}' (choose from ${option.choices.join(', ')})`);
    }
    args[name] = parsed;
  }
  if (unrecognized.length > 0) usageError(`unrecognized arguments: ${unrecognized.join(' ')}`);
  return args;
}

function log(message) {
  const time = new Date().toISOString().replace('T', ' ').slice(0, 19);
  process.stdout.write(`[${time}] INFO: ${message}\n`);
}

function imageSize(path) {
  if (!existsSync(path)) traceback(`FileNotFoundError: [Errno 2] No such file or directory: '${path}'`);
  const out = execFileSync(process.env.WAN_FAKE_FFPROBE, [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height'],
    ...['-of', 'csv=p=0', path],
  ]).toString();
  const [width, height] = out.trim().split(',').map(Number);
  if (!(width > 0 && height > 0))
    traceback(`PIL.UnidentifiedImageError: cannot identify image file '${path}'`);
  return { width, height };
}

/** wan/image2video.py: the image's shape at `--size`'s area, in multiples of vae_stride × patch_size = 16. */
function i2vSize(maxArea, image) {
  const aspect = image.height / image.width;
  const latH = Math.floor(Math.floor(Math.sqrt(maxArea * aspect) / 8) / 2) * 2;
  const latW = Math.floor(Math.floor(Math.sqrt(maxArea / aspect) / 8) / 2) * 2;
  return { width: latW * 8, height: latH * 8 };
}

const args = parseArgs(process.argv.slice(2));

// _validate_args
if (args.ckpt_dir === null) traceback('AssertionError: Please specify the checkpoint directory.');
if (args.task === 's2v-14B' || args.task === 'animate-14B') {
  traceback(`NotImplementedError: this fake does not model the ${args.task} task`);
}
const config = TASK_CONFIG[args.task];
if (args.prompt === null)
  args.prompt = 'Two anthropomorphic cats in comfy boxing gear fight on a spotlighted stage.';
if (args.task === 'i2v-A14B' && args.image === null) args.image = 'examples/i2v_input.JPG';
args.sample_steps ??= config.steps;
args.frame_num ??= config.frameNum;
if (args.base_seed < 0) args.base_seed = Math.floor(Math.random() * 2 ** 52);
if (!SUPPORTED_SIZES[args.task].includes(args.size)) {
  traceback(
    `AssertionError: Unsupport size ${args.size} for task ${args.task}, supported sizes are: ${SUPPORTED_SIZES[args.task].join(', ')}`,
  );
}

// generate
if ((args.t5_fsdp || args.dit_fsdp) && !process.env.WORLD_SIZE) {
  traceback('AssertionError: t5_fsdp and dit_fsdp are not supported in non-distributed environments.');
}
if (args.ulysses_size > 1 && !process.env.WORLD_SIZE) {
  traceback('AssertionError: sequence parallel are not supported in non-distributed environments.');
}
if (args.offload_model === null) {
  args.offload_model = true;
  log('offload_model is not specified, set to True.');
}
log(
  `Generation job args: Namespace(${Object.entries(args)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ')})`,
);
log(`Input prompt: ${args.prompt}`);
const image = args.image === null ? undefined : imageSize(args.image);
if (image) log(`Input image: ${args.image}`);
if (args.task === 'ti2v-5B' && image)
  traceback('NotImplementedError: this fake does not model ti2v-5B with --image');
log(`Creating Wan${args.task === 'i2v-A14B' ? 'I2V' : args.task === 'ti2v-5B' ? 'TI2V' : 'T2V'} pipeline.`);
if (!existsSync(args.ckpt_dir) || !statSync(args.ckpt_dir).isDirectory()) {
  traceback(
    `FileNotFoundError: [Errno 2] No such file or directory: '${args.ckpt_dir}/models_t5_umt5-xxl-enc-bf16.pth'`,
  );
}
const [sizeWidth, sizeHeight] = SIZE_CONFIGS[args.size];
let frames = args.frame_num;
let size = { width: sizeWidth, height: sizeHeight };
if (args.task === 'i2v-A14B') {
  if ((frames - 1) % 4 !== 0) {
    traceback(
      `RuntimeError: shape '[1, ${Math.floor((frames + 3) / 4)}, 4, 90, 160]' is invalid for input of size ${(frames + 3) * 14400}`,
    );
  }
  size = i2vSize(sizeWidth * sizeHeight, image);
} else {
  frames = Math.floor((frames - 1) / 4) * 4 + 1;
}
log('Generating video ...');
for (let step = 0; step <= args.sample_steps; step++) {
  const percent = String(Math.round((step / args.sample_steps) * 100)).padStart(3);
  process.stderr.write(
    `\r${percent}%|${'█'.repeat(Math.round((step / args.sample_steps) * 10)).padEnd(10)}| ${step}/${args.sample_steps} [00:01<00:01,  1.00s/it]`,
  );
}
process.stderr.write('\n');

const saveFile =
  args.save_file ??
  `${args.task}_${args.size}_${args.ulysses_size}_${args.prompt.replaceAll(' ', '_').replaceAll('/', '_').slice(0, 50)}.mp4`;
log(`Saving generated video to ${saveFile}`);
const cacheDir = process.env.WAN_FAKE_CACHE;
const cached = cacheDir
  ? join(cacheDir, `wan-${size.width}x${size.height}-${frames}-${config.fps}.mp4`)
  : undefined;
if (cached && existsSync(cached)) {
  copyFileSync(cached, saveFile);
} else {
  const source = `color=c=0x2f6fb0:size=${size.width}x${size.height}:rate=${config.fps}`;
  execFileSync(process.env.WAN_FAKE_FFMPEG, [
    ...['-v', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', source, '-frames:v', String(frames)],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', saveFile],
  ]);
  if (cached) {
    mkdirSync(cacheDir, { recursive: true });
    copyFileSync(saveFile, cached);
  }
}
if (process.env.WAN_FAKE_RECORD) {
  const record = { args, video: { ...size, frames, fps: config.fps } };
  appendFileSync(process.env.WAN_FAKE_RECORD, `${JSON.stringify(record)}\n`);
}
log('Finished.');
