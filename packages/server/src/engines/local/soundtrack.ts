/**
 * The local engine's own soundtrack (`generate_audio`): a four-chord progression in a key, tempo and mode
 * drawn from the prompt and seed (seeded-random.ts, like the scenes), played as soft FM pads with a bass note
 * at each bar and a plucked arpeggio of the chord's notes. Synthesised here as 48 kHz stereo 16-bit PCM and
 * written as a WAV file, which ffmpeg encodes to AAC beside the frames (frame-encoder.ts). The same prompt,
 * seed and length give the same samples.
 */
import { writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { hashString, mixSeeds, SeededRandom } from './seeded-random.js';

export const SOUNDTRACK_SAMPLE_RATE = 48_000;
const CHANNELS = 2;
/** Peak level of the mix: -6 dBFS, quiet enough to sit under speech. */
const PEAK = 0.5;
const FADE_IN_SECONDS = 0.05;
const MAX_FADE_OUT_SECONDS = 1;
/** Sets the soundtrack's draws apart from the scene's, which use the same prompt and seed. */
const SOUND_SALT = 0x534f554e;

const MAJOR = [0, 2, 4, 5, 7, 9, 11];
const MINOR = [0, 2, 3, 5, 7, 8, 10];
/** Scale degrees (0 = the tonic) of four-bar progressions that loop back to their start. */
const PROGRESSIONS: readonly (readonly number[])[] = [
  [0, 4, 5, 3],
  [0, 5, 3, 4],
  [0, 3, 4, 3],
  [5, 3, 0, 4],
  [0, 2, 5, 4],
  [0, 3, 5, 4],
];
/** Which chord tones (0, 1, 2: root, third, fifth; 3: the root an octave up) an arpeggio bar plays, by step. */
/**
 * One cycle of a sine, read with linear interpolation: several times quicker than `Math.sin` per sample, which
 * made the soundtrack cost more than encoding it; 4096 points put the error near -140 dB, far below 16 bits.
 */
const TABLE_SIZE = 4096;
const SINE_TABLE = Float64Array.from({ length: TABLE_SIZE + 1 }, (_, i) =>
  Math.sin((2 * Math.PI * i) / TABLE_SIZE),
);

/** sin(2π × `cycles`). */
function sine(cycles: number): number {
  const position = (cycles - Math.floor(cycles)) * TABLE_SIZE;
  const index = position | 0;
  const below = SINE_TABLE[index] as number;
  return below + ((SINE_TABLE[index + 1] as number) - below) * (position - index);
}

const ARPEGGIOS: readonly (readonly number[])[] = [
  [0, 1, 2, 3],
  [0, 2, 1, 2],
  [3, 2, 1, 0],
  [0, 1, 2, 1],
];

interface Voice {
  /** Seconds from the start. */
  readonly start: number;
  readonly seconds: number;
  readonly frequency: number;
  readonly gain: number;
  /** -1 (left) to 1 (right). */
  readonly pan: number;
  /** FM: the modulator's frequency over the carrier's, and its depth (radians) at the note's start. */
  readonly ratio: number;
  readonly index: number;
  /** Amplitude envelope: seconds of linear attack, then exponential decay with this time constant. */
  readonly attack: number;
  readonly decay: number;
}

function midiFrequency(note: number): number {
  return 440 * 2 ** ((note - 69) / 12);
}

/** The notes (MIDI) of the triad on `degree` of the scale, from `root`. */
function triad(root: number, scale: readonly number[], degree: number): number[] {
  return [0, 2, 4].map((step) => {
    const index = degree + step;
    return root + (scale[index % 7] as number) + 12 * Math.floor(index / 7);
  });
}

/** The notes of the soundtrack: what the prompt and seed choose. */
function compose(prompt: string, seed: number, seconds: number): Voice[] {
  const random = new SeededRandom(mixSeeds(hashString(prompt), seed, SOUND_SALT));
  const root = random.int(45, 56);
  const scale = random.next() < 0.5 ? MAJOR : MINOR;
  const progression = random.pick(PROGRESSIONS);
  const arpeggio = random.pick(ARPEGGIOS);
  const beat = 60 / random.int(72, 112);
  const bar = 4 * beat;
  const stepsPerBeat = random.int(1, 2);
  const padRatio = random.pick([1, 2, 3]);
  const voices: Voice[] = [];
  for (let barIndex = 0; barIndex * bar < seconds; barIndex++) {
    const start = barIndex * bar;
    const chord = triad(root, scale, progression[barIndex % progression.length] as number);
    for (const [i, note] of chord.entries()) {
      voices.push({
        start,
        seconds: bar + 0.6,
        frequency: midiFrequency(note + 12),
        gain: 0.16,
        pan: (i - 1) * 0.5,
        ratio: padRatio,
        index: 0.8,
        attack: 0.4,
        decay: 3 * bar,
      });
    }
    voices.push({
      start,
      seconds: bar,
      frequency: midiFrequency((chord[0] as number) - 12),
      gain: 0.3,
      pan: 0,
      ratio: 1,
      index: 1.5,
      attack: 0.01,
      decay: 0.6 * bar,
    });
    const steps = 4 * stepsPerBeat;
    for (let step = 0; step < steps; step++) {
      const tone = arpeggio[step % arpeggio.length] as number;
      const note = tone === 3 ? (chord[0] as number) + 12 : (chord[tone] as number);
      voices.push({
        start: start + (step * beat) / stepsPerBeat,
        seconds: 0.8,
        frequency: midiFrequency(note + 24),
        gain: 0.12,
        pan: random.range(-0.7, 0.7),
        ratio: 3.5,
        index: 2,
        attack: 0.005,
        decay: 0.18,
      });
    }
  }
  return voices;
}

/** Adds `voice` to the two channels, where it falls inside them. */
function play(voice: Voice, left: Float32Array, right: Float32Array): void {
  const rate = SOUNDTRACK_SAMPLE_RATE;
  const first = Math.round(voice.start * rate);
  const last = Math.min(left.length, first + Math.round(voice.seconds * rate));
  // In cycles per sample, and the modulation depth in cycles.
  const carrierStep = voice.frequency / rate;
  const modulatorStep = carrierStep * voice.ratio;
  const depth = voice.index / (2 * Math.PI);
  // Equal-power panning.
  const angle = ((voice.pan + 1) * Math.PI) / 4;
  const toLeft = Math.cos(angle) * voice.gain;
  const toRight = Math.sin(angle) * voice.gain;
  const attackSamples = Math.max(1, voice.attack * rate);
  const fall = Math.exp(-1 / (voice.decay * rate));
  // The tail's last 10 ms fade to nothing, so that a note cut by its length does not click.
  const tail = Math.min(last - first, Math.round(0.01 * rate));
  let decayed = 1;
  for (let i = 0; i < last - first; i++) {
    const attack = i < attackSamples ? i / attackSamples : 1;
    const release = i >= last - first - tail ? (last - first - i) / tail : 1;
    const envelope = attack * decayed * release;
    decayed *= fall;
    const sample = sine(carrierStep * i + depth * decayed * sine(modulatorStep * i)) * envelope;
    const at = first + i;
    left[at] = (left[at] as number) + sample * toLeft;
    right[at] = (right[at] as number) + sample * toRight;
  }
}

/**
 * The soundtrack of `seconds` for `prompt` and `seed`: interleaved stereo 16-bit samples at 48 kHz, peaking at
 * -6 dBFS, faded in and out.
 */
export function synthesizeSoundtrack(prompt: string, seed: number, seconds: number): Int16Array {
  const frames = Math.round(seconds * SOUNDTRACK_SAMPLE_RATE);
  const left = new Float32Array(frames);
  const right = new Float32Array(frames);
  for (const voice of compose(prompt, seed, seconds)) play(voice, left, right);
  let peak = 0;
  for (let i = 0; i < frames; i++)
    peak = Math.max(peak, Math.abs(left[i] as number), Math.abs(right[i] as number));
  const scale = peak > 0 ? (PEAK / peak) * 32767 : 0;
  const fadeIn = FADE_IN_SECONDS * SOUNDTRACK_SAMPLE_RATE;
  const fadeOut = Math.min(MAX_FADE_OUT_SECONDS, seconds / 4) * SOUNDTRACK_SAMPLE_RATE;
  const pcm = new Int16Array(frames * CHANNELS);
  for (let i = 0; i < frames; i++) {
    const fade = Math.min(1, i / fadeIn, (frames - i) / fadeOut);
    pcm[2 * i] = Math.round((left[i] as number) * scale * fade);
    pcm[2 * i + 1] = Math.round((right[i] as number) * scale * fade);
  }
  return pcm;
}

/** `pcm` (interleaved stereo 16-bit at 48 kHz) as a WAV file. */
export function wavFile(pcm: Int16Array): Buffer {
  const data = pcm.length * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(CHANNELS, 22);
  header.writeUInt32LE(SOUNDTRACK_SAMPLE_RATE, 24);
  header.writeUInt32LE(SOUNDTRACK_SAMPLE_RATE * CHANNELS * 2, 28);
  header.writeUInt16LE(CHANNELS * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  const samples = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  // WAV's samples are little-endian; concat copies them before a big-endian machine swaps its copy.
  const file = Buffer.concat([header, samples]);
  if (endianness() === 'BE') file.subarray(44).swap16();
  return file;
}

/** Writes the soundtrack for `prompt` and `seed`, `seconds` long, as a WAV file at `path`. */
export async function writeSoundtrack(
  path: string,
  prompt: string,
  seed: number,
  seconds: number,
): Promise<void> {
  await writeFile(path, wavFile(synthesizeSoundtrack(prompt, seed, seconds)));
}
