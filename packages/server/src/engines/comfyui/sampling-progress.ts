/**
 * Turns ComfyUI's progress messages (`value` of `max` steps of one node) into one fraction of the render that
 * never goes back. Each sampler node counts from 0, so the sampler nodes of the workflow share the range in
 * the order they run; progress bars of other nodes (a tiled decode) are ignored when the workflow has samplers.
 */

export class SamplingProgress {
  readonly #samplers: ReadonlySet<string>;
  readonly #ceiling: number;
  /** Run (node, and how often it started over) → its share's index. */
  readonly #runs = new Map<string, number>();
  readonly #restarts = new Map<string, number>();
  #lastNode: string | undefined;
  #lastValue = 0;
  #fraction = 0;

  /** `samplers`: the workflow's sampler node IDs; `ceiling`: the fraction the last step reaches. */
  constructor(samplers: ReadonlySet<string>, ceiling: number) {
    this.#samplers = samplers;
    this.#ceiling = ceiling;
  }

  get fraction(): number {
    return this.#fraction;
  }

  /** Takes one progress message; answers the new fraction when it moved forward. */
  update(node: string | undefined, value: number, max: number): number | undefined {
    if (!(max > 0) || !Number.isFinite(value)) return undefined;
    const id = node ?? '';
    if (this.#samplers.size > 0 && !this.#samplers.has(id)) return undefined;
    // A node that counts from the start again (a sampler looping inside one node) is another run.
    if (id === this.#lastNode && value < this.#lastValue)
      this.#restarts.set(id, (this.#restarts.get(id) ?? 0) + 1);
    this.#lastNode = id;
    this.#lastValue = value;
    const key = `${id}#${this.#restarts.get(id) ?? 0}`;
    let slot = this.#runs.get(key);
    if (slot === undefined) {
      slot = this.#runs.size;
      this.#runs.set(key, slot);
    }
    const expected = Math.max(this.#samplers.size, this.#runs.size);
    const within = Math.min(1, Math.max(0, value / max));
    const fraction = (this.#ceiling * (slot + within)) / expected;
    if (fraction <= this.#fraction) return undefined;
    this.#fraction = fraction;
    return fraction;
  }
}
