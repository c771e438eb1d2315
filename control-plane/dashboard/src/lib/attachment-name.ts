/**
 * The file name a Content-Disposition header gives, or `fallback`. Kept apart from save-file.ts,
 * which needs the DOM, so the API client stays testable in Node.
 */
export function attachmentName(header: string | null, fallback: string): string {
  const match = header === null ? null : /filename="([^"\\/]+)"/.exec(header);
  return match?.[1] ?? fallback;
}
