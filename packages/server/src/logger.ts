/** The process logger: JSON lines on stdout; credentials are redacted wherever they might appear. */
import { type Logger, pino } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'videogen' },
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'key',
        'apiKey',
        'secret',
      ],
      censor: '[redacted]',
    },
  });
}
