import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';
export type LogFormat = 'json' | 'pretty';

/** Paths that may carry credentials; pino replaces them before anything is written. */
const REDACT = [
  'password',
  'token',
  'authorization',
  '*.password',
  '*.token',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
];

export interface LoggerOptions {
  name: string;
  level?: string;
  format?: LogFormat;
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  const base = { name: opts.name, level: opts.level ?? process.env.LOG_LEVEL ?? 'info', redact: REDACT };
  // JSON lines an operator can grep as the vendors' controllers': "level":"INFO", "time":"<ISO 8601>".
  const readable = {
    formatters: { level: (label: string) => ({ level: label.toUpperCase() }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (opts.format === 'pretty') {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: process.stderr.isTTY, destination: 2 } },
    });
  }
  return pino({ ...base, ...readable }, (opts.destination ?? process.stderr) as pino.DestinationStream);
}

/** A logger that writes nothing, for tests and library defaults. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
