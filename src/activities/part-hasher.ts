import { Worker } from 'node:worker_threads';

/**
 * The thread's code, plain CommonJS (eval'd: no loader, the same under tsx and compiled): one file's
 * running sha256 and each part's own, in the order the parts arrive. The part's memory travels
 * both ways by transfer, never copied.
 */
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const whole = createHash('sha256');
parentPort.on('message', (m) => {
  if (m.end) return parentPort.postMessage({ whole: whole.digest('hex') });
  const bytes = new Uint8Array(m.buffer, 0, m.length);
  whole.update(bytes);
  const part = createHash('sha256').update(bytes).digest();
  parentPort.postMessage({ buffer: m.buffer, length: m.length, part }, [m.buffer]);
});
`;

/**
 * SHA256 of a multipart file's parts and of the whole file, off the event loop: hashing 4 GB twice
 * on the main thread (about 5 s at 1.6 GB/s) stalled the sockets of every part in flight.
 * Parts must be given in file order, each in a buffer of its own (Buffer.allocUnsafeSlow: a
 * pooled buffer's memory is shared and cannot be transferred).
 */
export class PartHasher {
  private readonly worker = new Worker(SOURCE, { eval: true });
  private readonly waiting: ((m: HasherReply) => void)[] = [];
  private failure: Error | undefined;

  constructor() {
    this.worker.on('message', (m: HasherReply) => this.waiting.shift()?.(m));
    this.worker.on('error', (err) => {
      this.failure = err;
      for (const settle of this.waiting.splice(0)) settle({ error: err });
    });
  }

  /** The part's SHA256, and the same bytes back (the buffer given is detached by the transfer). */
  async part(body: Buffer): Promise<{ body: Buffer; digest: Buffer }> {
    const { buffer } = body;
    if (body.byteOffset !== 0 || buffer.byteLength !== body.length || !(buffer instanceof ArrayBuffer))
      throw new Error('PartHasher.part needs a buffer of its own (Buffer.allocUnsafeSlow)');
    const reply = await this.ask({ buffer, length: body.length }, [buffer]);
    return {
      body: Buffer.from(reply.buffer as ArrayBuffer, 0, reply.length),
      digest: Buffer.from(reply.part as Uint8Array),
    };
  }

  /** The whole file's sha256 (hex), over every part given so far. */
  async whole(): Promise<string> {
    return (await this.ask({ end: true }, [])).whole as string;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private ask(message: object, transfer: ArrayBuffer[]): Promise<HasherReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push((m) => (m.error ? reject(m.error) : resolve(m)));
      this.worker.postMessage(message, transfer);
    });
  }
}

interface HasherReply {
  buffer?: ArrayBuffer;
  length?: number;
  part?: Uint8Array;
  whole?: string;
  error?: Error;
}
