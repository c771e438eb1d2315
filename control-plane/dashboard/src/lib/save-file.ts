/**
 * Hands a downloaded Blob to the browser as a file. The export is fetched with the bearer token
 * (the token never goes into a URL, where history and server logs would keep it), so the browser
 * cannot download it by itself; an object URL and a `download` link do the rest.
 */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has taken the data by the next task; a minute is generous for slow disks.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
