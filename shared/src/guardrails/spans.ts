/** A match found in a text: [start, end) in UTF-16 units, and the placeholder name its mask uses. */
export interface Span {
  start: number;
  end: number;
  /** Upper-case name of what was found (`EMAIL`, `SECRET`, a regex guardrail's label). */
  kind: string;
}

/** Finds every match in one text; pure and synchronous (compiled once per policy). */
export type Detector = (text: string) => Span[];
