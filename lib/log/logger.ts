import { writeStdoutLine } from './stdout.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string) => void;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

// Lambda forwards stdout lines to CloudWatch untouched, so one JSON object per line is
// directly queryable with Logs Insights; console.log would add its own prefix.
const stdoutSink: LogSink = writeStdoutLine;

export interface LoggerOptions {
  sink?: LogSink;
  level?: LogLevel;
  base?: LogFields;
  clock?: () => Date;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const sink = options.sink ?? stdoutSink;
  const threshold = ORDER[options.level ?? 'info'];
  const clock = options.clock ?? (() => new Date());
  const base = options.base ?? {};

  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (ORDER[level] < threshold) return;
    sink(JSON.stringify({ level, timestamp: clock().toISOString(), message, ...base, ...fields }));
  };

  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}

export function parseLogLevel(value: string | undefined): LogLevel {
  const lower = value?.trim().toLowerCase();
  if (lower === 'trace' || lower === 'debug') return 'debug';
  if (lower === 'fatal' || lower === 'error') return 'error';
  return lower === 'warn' ? 'warn' : 'info';
}

/**
 * The level a function logs at: Lambda's own setting (`AWS_LAMBDA_LOG_LEVEL`, set by the
 * function's application log level) wins over ours (`LOG_LEVEL`, the stack's LogLevel).
 */
export function logLevelFrom(env: Record<string, string | undefined>): LogLevel {
  return parseLogLevel(env['AWS_LAMBDA_LOG_LEVEL']?.trim() || env['LOG_LEVEL']);
}

/** Marks the first invocation of a container: `coldStart` is true once, then false. */
export function coldStartTracker(): () => boolean {
  let cold = true;
  return () => {
    const was = cold;
    cold = false;
    return was;
  };
}
