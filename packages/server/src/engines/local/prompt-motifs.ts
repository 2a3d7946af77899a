/** Scene elements the prompt asks for by name ("rain", "stars", "ocean"), drawn on top of the abstract scene. */
import { words } from './palette.js';

export type Motif = 'stars' | 'rain' | 'snow' | 'waves' | 'sun' | 'moon';

const MOTIF_WORDS: Readonly<Record<Motif, readonly string[]>> = {
  stars: ['star', 'stars', 'starry', 'galaxy', 'cosmic', 'space', 'night', 'universe', 'nebula'],
  rain: ['rain', 'rainy', 'raining', 'storm', 'stormy', 'drizzle', 'downpour'],
  snow: ['snow', 'snowy', 'snowing', 'snowfall', 'blizzard', 'winter', 'snowflakes'],
  waves: ['ocean', 'sea', 'wave', 'waves', 'water', 'river', 'lake', 'beach', 'surf', 'tide'],
  sun: ['sun', 'sunset', 'sunrise', 'sunlight', 'sunny', 'planet'],
  moon: ['moon', 'moonlight', 'moonlit'],
};

export function motifsIn(prompt: string): Set<Motif> {
  const present = new Set(words(prompt));
  const motifs = new Set<Motif>();
  for (const [motif, triggers] of Object.entries(MOTIF_WORDS) as [Motif, readonly string[]][]) {
    if (triggers.some((word) => present.has(word))) motifs.add(motif);
  }
  return motifs;
}
