/**
 * The little of RFC 6455 that a client of the apiserver's streaming endpoints (pod exec) needs:
 * reading the server's frames (unmasked, possibly fragmented) into messages, and writing masked
 * frames (close, pong). The handshake is the transport's (`Transport.upgrade`, http.ts).
 */
import { createHash, randomBytes } from 'node:crypto';

/** A whole message (fragments joined) or a control frame. */
export interface WsMessage {
  /** 1 text, 2 binary, 8 close, 9 ping, 10 pong. */
  opcode: number;
  data: Buffer;
}

/** The `Sec-WebSocket-Accept` a server must answer to `key`. */
export function acceptFor(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
}

/** A fresh `Sec-WebSocket-Key`. */
export function newKey(): string {
  return randomBytes(16).toString('base64');
}

/** Splits the bytes a server sends into messages; {@link push} returns those completed. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  private partial: { opcode: number; parts: Buffer[] } | undefined;

  push(chunk: Buffer): WsMessage[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: WsMessage[] = [];
    for (;;) {
      const f = this.frame();
      if (!f) return out;
      if (f.opcode >= 8) out.push({ opcode: f.opcode, data: f.data });
      else if (f.opcode === 0 && this.partial) {
        this.partial.parts.push(f.data);
        if (f.fin) {
          out.push({ opcode: this.partial.opcode, data: Buffer.concat(this.partial.parts) });
          this.partial = undefined;
        }
      } else if (f.fin) out.push({ opcode: f.opcode, data: f.data });
      else this.partial = { opcode: f.opcode, parts: [f.data] };
    }
  }

  private frame(): { fin: boolean; opcode: number; data: Buffer } | undefined {
    const b = this.buf;
    if (b.length < 2) return undefined;
    const b0 = b[0] ?? 0;
    const b1 = b[1] ?? 0;
    let len = b1 & 0x7f;
    let off = 2;
    if (len === 126) {
      if (b.length < 4) return undefined;
      len = b.readUInt16BE(2);
      off = 4;
    } else if (len === 127) {
      if (b.length < 10) return undefined;
      len = Number(b.readBigUInt64BE(2));
      off = 10;
    }
    const masked = (b1 & 0x80) !== 0;
    const maskAt = off;
    if (masked) off += 4;
    if (b.length < off + len) return undefined;
    const data = Buffer.from(b.subarray(off, off + len));
    if (masked) for (let i = 0; i < data.length; i++) data[i] = (data[i] ?? 0) ^ (b[maskAt + (i % 4)] ?? 0);
    this.buf = b.subarray(off + len);
    return { fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, data };
  }
}

/** One masked frame from the client (`opcode` 8 close, 10 pong, 2 binary). */
export function clientFrame(opcode: number, payload: Buffer = Buffer.alloc(0), mask: Buffer = randomBytes(4)): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : len < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff]) : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), bigLen(len)]);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] = (body[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([head, mask, body]);
}

function bigLen(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
