/**
 * The order a reference-mode video shows its references in. Plain-language mentions in the prompt ("image 2",
 * "the second video", "@video1", "clip #3") come first, in the order they appear; the references never
 * mentioned follow in request order, images before videos. Mentions of a reference that does not exist are
 * ignored, as is any mention after the first of the same reference.
 */

export type ReferenceKind = 'image' | 'video';

export interface ReferenceSlot {
  readonly kind: ReferenceKind;
  /** Zero-based index into `image_urls` or `video_urls`. */
  readonly index: number;
}

const KIND_WORDS: Readonly<Record<string, ReferenceKind>> = {
  image: 'image',
  images: 'image',
  img: 'image',
  picture: 'image',
  photo: 'image',
  video: 'video',
  videos: 'video',
  clip: 'video',
};

const ORDINALS: Readonly<Record<string, number>> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
};

const KIND = Object.keys(KIND_WORDS).join('|');
const ORDINAL = Object.keys(ORDINALS).join('|');
/** "image 2", "@image2", "video #1", "clip no. 3"; or "the second image", "first video". */
const MENTION = new RegExp(
  `(?<![a-z0-9])(?:(?<kind>${KIND})\\s*(?:#|no\\.?\\s*)?(?<number>\\d{1,2})(?![0-9])|(?<ordinal>${ORDINAL})\\s+(?<kindAfter>${KIND})(?![a-z]))`,
  'gi',
);

export function mentionedOrder(prompt: string, imageCount: number, videoCount: number): ReferenceSlot[] {
  const counts: Record<ReferenceKind, number> = { image: imageCount, video: videoCount };
  const seen = new Set<string>();
  const order: ReferenceSlot[] = [];
  const add = (kind: ReferenceKind, index: number): void => {
    const key = `${kind}:${index}`;
    if (index < 0 || index >= counts[kind] || seen.has(key)) return;
    seen.add(key);
    order.push({ kind, index });
  };
  for (const match of prompt.matchAll(MENTION)) {
    const groups = match.groups ?? {};
    const kindWord = (groups.kind ?? groups.kindAfter ?? '').toLowerCase();
    const kind = KIND_WORDS[kindWord];
    const number = groups.number ? Number(groups.number) : ORDINALS[(groups.ordinal ?? '').toLowerCase()];
    if (kind && number !== undefined) add(kind, number - 1);
  }
  for (let i = 0; i < imageCount; i++) add('image', i);
  for (let i = 0; i < videoCount; i++) add('video', i);
  return order;
}
