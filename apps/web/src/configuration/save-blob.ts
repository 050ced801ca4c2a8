/**
 * Hands a blob fetched through the typed client to the browser's download manager. The recovery kit is small and
 * needs the session's auth, so it comes through the client (not a single-use link) and leaves as an object URL.
 */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // Revoke later: the download manager reads the URL after this click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
