/*
 * A GGUF v3 writer for tests (written from ggml's docs/gguf.md): header, typed key/value metadata, tensor infos,
 * padding to the alignment, tensor data. Only what a test model needs: scalar, string and array values; F32 and
 * F16 tensors.
 *
 * Layout (little-endian): "GGUF", u32 version = 3, u64 tensor_count, u64 kv_count; each kv = string key, u32
 * value type, value (string = u64 length + UTF-8 bytes; array = u32 element type, u64 count, elements); each
 * tensor info = string name, u32 n_dims, u64 dims[n_dims] (ne0 first: the fastest-moving dimension), u32 ggml type,
 * u64 offset into the data blob (a multiple of the alignment); zero padding to the alignment; the data blob.
 */
import { writeFileSync } from 'node:fs';

const ALIGNMENT = 32;

/** gguf_type */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
type ScalarType = Exclude<(typeof GgufType)[keyof typeof GgufType], 9>;

export type GgufValue =
  | { type: ScalarType; value: number | bigint | boolean | string }
  | { type: 9; itemType: ScalarType; values: readonly (number | bigint | boolean | string)[] };

/** ggml_type of a tensor: only the two plain float types. */
export const GgmlType = { F32: 0, F16: 1 } as const;

export type GgufTensor = {
  name: string;
  /** ggml order: dims[0] is the row length (ne0). */
  dims: readonly number[];
  type: (typeof GgmlType)[keyof typeof GgmlType];
  data: Float32Array;
};

export const u32 = (value: number): GgufValue => ({ type: GgufType.UINT32, value });
export const f32 = (value: number): GgufValue => ({ type: GgufType.FLOAT32, value });
export const str = (value: string): GgufValue => ({ type: GgufType.STRING, value });
export const strings = (values: readonly string[]): GgufValue => ({
  type: GgufType.ARRAY,
  itemType: GgufType.STRING,
  values,
});
export const i32s = (values: readonly number[]): GgufValue => ({
  type: GgufType.ARRAY,
  itemType: GgufType.INT32,
  values,
});
export const f32s = (values: readonly number[]): GgufValue => ({
  type: GgufType.ARRAY,
  itemType: GgufType.FLOAT32,
  values,
});

/** Grows a byte buffer as values are appended. */
class Bytes {
  private buf = Buffer.alloc(1 << 16);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u8(v: number): void {
    this.room(1);
    this.buf.writeUInt8(v, this.length);
    this.length += 1;
  }
  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  u64(v: number | bigint): void {
    this.room(8);
    this.buf.writeBigUInt64LE(BigInt(v), this.length);
    this.length += 8;
  }
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.raw(b);
  }
  pad(): void {
    while (this.length % ALIGNMENT !== 0) this.u8(0);
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function writeScalar(out: Bytes, type: ScalarType, value: number | bigint | boolean | string): void {
  const b = Buffer.alloc(8);
  switch (type) {
    case GgufType.UINT8:
    case GgufType.INT8:
    case GgufType.BOOL:
      out.u8(typeof value === 'boolean' ? (value ? 1 : 0) : Number(value) & 0xff);
      return;
    case GgufType.UINT16:
    case GgufType.INT16:
      b.writeUInt16LE(Number(value) & 0xffff);
      out.raw(b.subarray(0, 2));
      return;
    case GgufType.UINT32:
      out.u32(Number(value));
      return;
    case GgufType.INT32:
      b.writeInt32LE(Number(value));
      out.raw(b.subarray(0, 4));
      return;
    case GgufType.FLOAT32:
      b.writeFloatLE(Number(value));
      out.raw(b.subarray(0, 4));
      return;
    case GgufType.STRING:
      out.string(String(value));
      return;
    case GgufType.UINT64:
      out.u64(BigInt(value));
      return;
    case GgufType.INT64:
      b.writeBigInt64LE(BigInt(value));
      out.raw(b);
      return;
    case GgufType.FLOAT64:
      b.writeDoubleLE(Number(value));
      out.raw(b);
      return;
  }
}

function tensorBytes(t: GgufTensor): Uint8Array {
  if (t.type === GgmlType.F32) return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = Buffer.alloc(t.data.length * 2);
  for (let i = 0; i < t.data.length; i++) out.writeUInt16LE(toHalf(t.data[i]!), i * 2);
  return out;
}

/** IEEE 754 binary16 from a float (round to nearest; the test weights are small, so no subnormal care). */
function toHalf(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign; // too small for a normal half: zero
  if (exp >= 31) return sign | 0x7c00; // too large: infinity
  const rounded = (exp << 10) | (mant >>> 13);
  return sign | (rounded + ((mant >>> 12) & 1));
}

/** The bytes of a GGUF v3 file with these metadata and tensors. */
export function encodeGguf(metadata: Record<string, GgufValue>, tensors: readonly GgufTensor[]): Buffer {
  const out = new Bytes();
  out.raw(Buffer.from('GGUF', 'ascii'));
  out.u32(3);
  out.u64(tensors.length);
  const entries = Object.entries(metadata);
  out.u64(entries.length);
  for (const [key, v] of entries) {
    out.string(key);
    out.u32(v.type);
    if (v.type === GgufType.ARRAY) {
      out.u32(v.itemType);
      out.u64(v.values.length);
      for (const item of v.values) writeScalar(out, v.itemType, item);
    } else writeScalar(out, v.type, v.value);
  }
  const blobs = tensors.map(tensorBytes);
  let offset = 0;
  tensors.forEach((t, i) => {
    const count = t.dims.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`${t.name}: dims hold ${count} values, data has ${t.data.length}`);
    out.string(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(t.type);
    out.u64(offset);
    offset += Math.ceil(blobs[i]!.length / ALIGNMENT) * ALIGNMENT;
  });
  out.pad();
  for (const blob of blobs) {
    out.raw(blob);
    out.pad();
  }
  return out.bytes();
}

export function writeGguf(
  file: string,
  metadata: Record<string, GgufValue>,
  tensors: readonly GgufTensor[],
): void {
  writeFileSync(file, encodeGguf(metadata, tensors));
}
