/**
 * Starts a download by following a link, as a user's click on one would: the browser streams the
 * answer to disk as it arrives, however large, and shows it in its own downloads list. (A script
 * that fetched the file itself to add an Authorization header would hold all of it in memory
 * first.) The link's one-minute ticket stands in for the header; an empty `download` attribute
 * keeps the name the server gives in Content-Disposition. Chosen over the File System Access API
 * (showSaveFilePicker), which only Chromium has and which asks for a place before every export.
 */
export function followDownloadLink(url: string): void {
  const link = document.createElement('a');
  link.href = url;
  link.download = '';
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
}

/**
 * Saves what the page already holds (a batch's JSON lines, fetched with the bearer: the API has
 * no download ticket for them) under `name`, through an object URL revoked once the browser has
 * taken it.
 */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // A click starts the download on the next task; the URL must live until then.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
