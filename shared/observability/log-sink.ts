/** The logging the cores need: the Powertools Logger satisfies it, and so does a drill's counter. */
export interface LogSink {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
}
