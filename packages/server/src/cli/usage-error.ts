/** A command line that does not parse: `videogen` prints the usage after the message and exits with 2. */
export class UsageError extends Error {}
