/** multipart/form-data encoding to a buffer (so a body can be re-sent on retries). */
import { bytesOf, isBinaryValue, type BinaryValue } from '../../common/binary.js';

export interface FilePart {
  value: BinaryValue | string;
  filename?: string;
}

export async function encodeMultipart(
  fields: Array<[string, string]>,
  files: Record<string, FilePart>,
): Promise<{ body: Buffer; contentType: string }> {
  const fd = new FormData();
  for (const [k, v] of fields) fd.append(k, v);
  for (const [name, part] of Object.entries(files)) {
    const type = isBinaryValue(part.value) ? part.value.contentType : 'text/plain';
    const filename = part.filename ?? (isBinaryValue(part.value) ? part.value.filename : undefined) ?? name;
    fd.append(name, new Blob([new Uint8Array(bytesOf(part.value))], { type }), filename);
  }
  const res = new Response(fd);
  return { body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type')! };
}
