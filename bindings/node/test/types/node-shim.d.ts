// The few Node.js types index.d.ts names, for type-checking it where
// @types/node is not installed (Debian has no package of it). A consumer
// with @types/node gets the real ones.
declare class Buffer extends Uint8Array {
  toString(encoding?: string): string;
}
declare module 'node:stream' {
  export class Readable {
    on(event: 'data', listener: (chunk: Buffer) => void): this;
    [Symbol.asyncIterator](): AsyncIterableIterator<Buffer>;
  }
  export class Writable {
    write(chunk: string | Buffer): boolean;
    end(chunk?: string | Buffer): this;
  }
}
