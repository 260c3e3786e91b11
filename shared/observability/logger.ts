// Structured logs: one JSON object per line, so Application Insights and `jq` can both read them.
// Every line carries the bound fields (for example the NodeClaim's name and uid).

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every line also carries `fields`. */
  with(fields: LogFields): Logger;
}

export type LogSink = (level: LogLevel, line: string) => void;

const levelOrder: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const stderrSink: LogSink = (_level, line) => {
  process.stderr.write(line + '\n');
};

export function createLogger(options: {
  component: string;
  minLevel?: LogLevel;
  sink?: LogSink;
  fields?: LogFields;
}): Logger {
  const minLevel = options.minLevel ?? 'info';
  const sink = options.sink ?? stderrSink;
  const bound: LogFields = { component: options.component, ...options.fields };

  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (levelOrder[level] < levelOrder[minLevel]) return;
    const record = { time: new Date().toISOString(), level, message, ...bound, ...fields };
    sink(level, JSON.stringify(record, errorReplacer));
  };

  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger({ ...options, fields: { ...bound, ...fields } }),
  };
}

/** A logger that drops everything; for tests that assert on behaviour, not on logs. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  with: () => silentLogger,
};

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
