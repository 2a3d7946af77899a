/** The end of what a command printed, for the message of a failed task. */

const OUTPUT_KEEP_CHARS = 16_384;
const TAIL_LINES = 8;
const TAIL_MAX_CHARS = 1500;

/** The last characters a stream printed, kept for error messages. */
export class OutputTail {
  #text = '';

  push(chunk: string): void {
    this.#text = (this.#text + chunk).slice(-OUTPUT_KEEP_CHARS);
  }

  /** The last few lines, progress bars left out, on one line. */
  lines(): string {
    const lines: string[] = [];
    for (const raw of this.#text.split(/[\r\n]+/)) {
      const line = raw.trim();
      if (!line || /\d%\s*\|/.test(line) || lines.at(-1) === line) continue;
      lines.push(line);
    }
    const tail = lines.slice(-TAIL_LINES).join(' | ');
    return tail.length > TAIL_MAX_CHARS ? `…${tail.slice(-TAIL_MAX_CHARS)}` : tail;
  }
}
