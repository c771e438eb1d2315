/** Types of log-lines.js (plain JavaScript: `npm start` runs it without a build step). */
export type LogFormatter = (line: string) => string | null;
export function createLogFormatter(name: string): LogFormatter;
export function formatLogLine(name: string, line: string, pending?: Map<unknown, { method?: string; url?: string }>): string | null;
