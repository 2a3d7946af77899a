/** Colours for a text-mode scene: colour words in the prompt first, then a scheme from a hash of the prompt. */
import { hashString } from './seeded-random.js';

/** Hue in degrees, saturation and lightness in 0..1. */
export interface Hsl {
  readonly h: number;
  readonly s: number;
  readonly l: number;
}

export interface Palette {
  /** Three stops of the background gradient. */
  readonly background: readonly [Hsl, Hsl, Hsl];
  /** Shape colours, most prominent first. */
  readonly accents: readonly Hsl[];
  /** Whether the background is light: shapes then darken it instead of glowing on it. */
  readonly light: boolean;
}

const hsl = (h: number, s: number, l: number): Hsl => ({ h, s, l });

const COLOUR_WORDS: Readonly<Record<string, readonly Hsl[]>> = {
  red: [hsl(0, 0.85, 0.5)],
  crimson: [hsl(348, 0.83, 0.47)],
  scarlet: [hsl(6, 0.9, 0.5)],
  orange: [hsl(28, 0.95, 0.55)],
  amber: [hsl(40, 1, 0.5)],
  gold: [hsl(46, 0.9, 0.52)],
  golden: [hsl(46, 0.9, 0.52)],
  yellow: [hsl(55, 0.95, 0.55)],
  lime: [hsl(90, 0.8, 0.5)],
  green: [hsl(125, 0.65, 0.42)],
  emerald: [hsl(145, 0.7, 0.42)],
  olive: [hsl(70, 0.5, 0.35)],
  teal: [hsl(178, 0.7, 0.38)],
  turquoise: [hsl(172, 0.7, 0.5)],
  cyan: [hsl(187, 0.9, 0.5)],
  aqua: [hsl(185, 0.85, 0.55)],
  blue: [hsl(218, 0.85, 0.52)],
  azure: [hsl(208, 0.9, 0.55)],
  navy: [hsl(226, 0.7, 0.22)],
  indigo: [hsl(250, 0.65, 0.38)],
  violet: [hsl(272, 0.75, 0.55)],
  purple: [hsl(282, 0.65, 0.45)],
  lavender: [hsl(262, 0.6, 0.78)],
  magenta: [hsl(305, 0.85, 0.52)],
  pink: [hsl(330, 0.85, 0.68)],
  rose: [hsl(345, 0.75, 0.6)],
  brown: [hsl(25, 0.5, 0.3)],
  beige: [hsl(38, 0.45, 0.8)],
  white: [hsl(0, 0, 0.96)],
  black: [hsl(0, 0, 0.05)],
  gray: [hsl(0, 0, 0.5)],
  grey: [hsl(0, 0, 0.5)],
  silver: [hsl(210, 0.08, 0.75)],
  // Scene words that imply colours (SCENE_WORDS).
  sunset: [hsl(22, 0.95, 0.55), hsl(335, 0.75, 0.55), hsl(270, 0.55, 0.35)],
  sunrise: [hsl(35, 0.95, 0.6), hsl(350, 0.7, 0.7), hsl(200, 0.6, 0.65)],
  ocean: [hsl(205, 0.85, 0.4), hsl(178, 0.7, 0.45)],
  sea: [hsl(200, 0.8, 0.42), hsl(175, 0.6, 0.5)],
  forest: [hsl(130, 0.55, 0.3), hsl(95, 0.5, 0.42)],
  fire: [hsl(8, 0.95, 0.5), hsl(32, 1, 0.55), hsl(52, 1, 0.6)],
  flame: [hsl(15, 0.95, 0.5), hsl(40, 1, 0.55)],
  night: [hsl(230, 0.6, 0.15), hsl(255, 0.5, 0.3)],
  space: [hsl(240, 0.5, 0.1), hsl(280, 0.6, 0.35)],
  snow: [hsl(205, 0.3, 0.92), hsl(210, 0.5, 0.75)],
  ice: [hsl(195, 0.6, 0.85), hsl(205, 0.7, 0.6)],
  desert: [hsl(35, 0.6, 0.65), hsl(20, 0.65, 0.5)],
  sand: [hsl(40, 0.55, 0.72)],
  autumn: [hsl(20, 0.85, 0.48), hsl(40, 0.9, 0.5), hsl(5, 0.7, 0.4)],
  neon: [hsl(310, 1, 0.55), hsl(185, 1, 0.5), hsl(90, 1, 0.55)],
  grass: [hsl(105, 0.6, 0.45)],
  sky: [hsl(205, 0.75, 0.65)],
};

const LIGHT_WORDS = new Set([
  'bright',
  'light',
  'pastel',
  'sunny',
  'white',
  'snow',
  'day',
  'daylight',
  'airy',
]);
const DARK_WORDS = new Set(['dark', 'night', 'midnight', 'shadow', 'space', 'moody', 'black', 'noir']);

const MAX_ACCENTS = 5;

export function words(prompt: string): string[] {
  return prompt.toLowerCase().match(/[a-z]+/g) ?? [];
}

/** Scene words that imply colours ("sunset", "forest") rather than name one. */
const SCENE_WORDS = new Set([
  'sunset',
  'sunrise',
  'ocean',
  'sea',
  'forest',
  'fire',
  'flame',
  'night',
  'space',
  'snow',
  'ice',
  'desert',
  'sand',
  'autumn',
  'neon',
  'grass',
  'sky',
]);

/** The colours the prompt names ("red") and those its scene words imply ("sky"), each in prompt order. */
function colourWordsIn(prompt: string): { named: Hsl[]; implied: Hsl[] } {
  const named: Hsl[] = [];
  const implied: Hsl[] = [];
  const seen = new Set<string>();
  for (const word of words(prompt)) {
    const colours = COLOUR_WORDS[word];
    if (!colours || seen.has(word)) continue;
    seen.add(word);
    (SCENE_WORDS.has(word) ? implied : named).push(...colours);
  }
  return { named, implied };
}

function rotate(colour: Hsl, degrees: number): Hsl {
  return { ...colour, h: (((colour.h + degrees) % 360) + 360) % 360 };
}

function withLightness(colour: Hsl, l: number): Hsl {
  return { ...colour, l: Math.min(1, Math.max(0, l)) };
}

/** Hash-chosen harmonies for prompts that name no colour. */
function schemeFromHash(hash: number): Hsl[] {
  const base = hsl(hash % 360, 0.65 + ((hash >>> 9) % 30) / 100, 0.5 + ((hash >>> 15) % 15) / 100);
  switch ((hash >>> 20) % 3) {
    case 0:
      return [base, rotate(base, 30), rotate(base, -35), rotate(base, 180)];
    case 1:
      return [base, rotate(base, 120), rotate(base, 240)];
    default:
      return [base, rotate(base, 150), rotate(base, 210), rotate(base, 20)];
  }
}

export function paletteFromPrompt(prompt: string): Palette {
  const hash = hashString(prompt);
  const { named, implied } = colourWordsIn(prompt);
  const promptWords = new Set(words(prompt));
  const wantsLight = [...LIGHT_WORDS].some((w) => promptWords.has(w));
  const wantsDark = [...DARK_WORDS].some((w) => promptWords.has(w));
  const light = wantsLight && !wantsDark;

  // Colours the prompt names come first and set the background; colours its scene words imply follow.
  let accents: Hsl[] = [...named, ...implied];
  if (accents.length === 0) accents = schemeFromHash(hash);
  const [first] = accents;
  const turn = hash % 2 === 0 ? 1 : -1;
  // One colour alone is too flat: its neighbours join it, the side chosen by the prompt's hash.
  const neighbour = first ? rotate(first, turn * 25) : undefined;
  if (first && neighbour && (named.length === 1 || accents.length < 3)) {
    accents.splice(1, 0, neighbour, withLightness(rotate(first, -turn * 15), first.l + 0.2));
  }

  const main = accents[0] ?? hsl(hash % 360, 0.6, 0.5);
  const second = accents[1] ?? rotate(main, 40);
  const background: [Hsl, Hsl, Hsl] = light
    ? [withLightness(main, 0.88), withLightness(second, 0.78), withLightness(rotate(main, 20), 0.92)]
    : [withLightness(main, 0.16), withLightness(second, 0.28), withLightness(rotate(main, -25), 0.1)];

  return { background, accents: accents.slice(0, MAX_ACCENTS), light };
}

/** A CSS colour string for canvas. */
export function css(colour: Hsl, alpha = 1): string {
  const h = Math.round(colour.h * 10) / 10;
  const s = Math.round(colour.s * 1000) / 10;
  const l = Math.round(colour.l * 1000) / 10;
  return `hsla(${h}, ${s}%, ${l}%, ${Math.round(alpha * 1000) / 1000})`;
}
