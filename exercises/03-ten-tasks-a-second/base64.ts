// A stream stage that encodes bytes as base64 text. Base64 turns each 3 bytes into 4 characters, so a
// chunk whose length is not a multiple of 3 keeps its last 1 or 2 bytes for the next chunk; encoding
// every chunk on its own would put padding (=) in the middle of the output.
import { Transform, type TransformCallback } from 'node:stream';

export class Base64Encoder extends Transform {
  private rest: Buffer = Buffer.alloc(0);

  constructor() {
    super({ decodeStrings: true, encoding: 'latin1' });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const bytes = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % 3);
    this.rest = bytes.subarray(whole);
    if (whole > 0) this.push(bytes.toString('base64', 0, whole), 'latin1');
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.rest.length > 0) this.push(this.rest.toString('base64'), 'latin1');
    callback();
  }
}
