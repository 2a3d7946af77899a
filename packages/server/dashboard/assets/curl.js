// @ts-check
/** The curl commands equivalent to what the playground sends, for the reader's own scripts. */

/** Quotes a string for a POSIX shell: inside single quotes, a quote is `'\''`. */
/** @param {string} text */
function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * `uploads` are the files still to upload (their URLs in `body` are placeholders); the commands upload them
 * first, then create the task.
 * @param {{ origin: string, body: object, uploads?: File[] }} request
 */
export function curlCommands({ origin, body, uploads = [] }) {
  const auth = '-H "Authorization: Bearer $VIDEOGEN_API_KEY"';
  const lines = [];
  if (uploads.length > 0) {
    lines.push('# Upload each file, then put the "url" of its answer in the request below.');
    for (const file of uploads) {
      lines.push(`curl -s ${origin}/v1/files ${auth} -F ${shellQuote(`file=@${file.name}`)}`);
    }
    lines.push('');
  }
  lines.push(
    `curl -s ${origin}/v1/videos/generations \\`,
    `  ${auth} \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d ${shellQuote(JSON.stringify(body, null, 2))}`,
  );
  return lines.join('\n');
}
