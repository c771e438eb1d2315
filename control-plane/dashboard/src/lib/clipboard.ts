/**
 * Copies text. The async clipboard needs a secure context (https or localhost); over plain http
 * on another host it is missing, and the old selection-based command still works there.
 */
export async function copyText(text: string, field: HTMLInputElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard !== undefined) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, document not focused): fall through to the selection.
  }
  if (field === null) return false;
  field.focus();
  field.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}
