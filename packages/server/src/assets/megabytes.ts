/** A byte count as asset messages show it: `20 MB`, `1.5 MB`. */
export function megabytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}
