#!/usr/bin/env node
// Draws Keel's icon (a sailboat whose keel is the accent) and writes assets/icon.png (1024 px, used for macOS and
// Windows) plus assets/icons/<n>x<n>.png (Linux). Pure Node: no image tool needed. The PNGs are committed; rerun
// this only when the design changes: `node scripts/generate-icon.mjs`.
import { Buffer } from 'node:buffer';
import console from 'node:console';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const assets = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'assets');
const linuxSizes = [16, 32, 48, 64, 128, 256, 512];

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** Encodes straight RGBA pixels as a PNG (8-bit, colour type 6, no filtering). */
function encodePng(size, rgba) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function insideRoundedSquare(x, y, inset, radius) {
  const min = inset + radius;
  const max = 1 - inset - radius;
  const dx = Math.max(min - x, 0, x - max);
  const dy = Math.max(min - y, 0, y - max);
  return dx * dx + dy * dy <= radius * radius && x >= inset && x <= 1 - inset && y >= inset && y <= 1 - inset;
}

function insideTriangle(x, y, [ax, ay], [bx, by], [cx, cy]) {
  const d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by);
  const d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy);
  const d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay);
  const negative = d1 < 0 || d2 < 0 || d3 < 0;
  const positive = d1 > 0 || d2 > 0 || d3 > 0;
  return !(negative && positive);
}

const white = [246, 248, 250];
const sail = [127, 211, 200];
const keel = [242, 177, 52];
const sea = [64, 140, 190];

/** The colour at a point of the unit square, or null outside the icon. Later shapes paint over earlier ones. */
function colourAt(x, y) {
  if (!insideRoundedSquare(x, y, 0.06, 0.2)) return null;
  const t = (x + y) / 2;
  let colour = [Math.round(14 + 20 * t), Math.round(36 + 44 * t), Math.round(62 + 60 * t)];
  if (y > 0.62 && Math.sin(x * Math.PI * 6) * 0.012 + 0.62 < y) colour = mix(colour, sea, 0.35);
  const hullTop = 0.5;
  const inHull = y >= hullTop && ((x - 0.5) / 0.31) ** 2 + ((y - hullTop) / 0.13) ** 2 <= 1;
  const bladeHalfWidth = 0.045 - (y - 0.6) * 0.08;
  const inBlade = y >= 0.6 && y <= 0.84 && Math.abs(x - 0.5) <= bladeHalfWidth;
  const inBulb = ((x - 0.5) / 0.085) ** 2 + ((y - 0.84) / 0.03) ** 2 <= 1;
  if (inBlade || inBulb) colour = keel;
  if (inHull) colour = white;
  if (Math.abs(x - 0.5) <= 0.012 && y >= 0.14 && y <= hullTop) colour = white;
  if (insideTriangle(x, y, [0.53, 0.16], [0.53, 0.46], [0.76, 0.46])) colour = sail;
  if (insideTriangle(x, y, [0.47, 0.22], [0.47, 0.46], [0.3, 0.46])) colour = mix(sail, white, 0.45);
  return colour;
}

function mix(a, b, amount) {
  return a.map((value, i) => Math.round(value * (1 - amount) + b[i] * amount));
}

/** Renders the icon at `size` pixels with 4x4 supersampling so edges are smooth at every size. */
function render(size) {
  const samples = 4;
  const rgba = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let covered = 0;
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          const colour = colourAt((px + (sx + 0.5) / samples) / size, (py + (sy + 0.5) / samples) / size);
          if (colour === null) continue;
          r += colour[0];
          g += colour[1];
          b += colour[2];
          covered++;
        }
      }
      const offset = (py * size + px) * 4;
      if (covered === 0) continue;
      rgba[offset] = Math.round(r / covered);
      rgba[offset + 1] = Math.round(g / covered);
      rgba[offset + 2] = Math.round(b / covered);
      rgba[offset + 3] = Math.round((255 * covered) / (samples * samples));
    }
  }
  return encodePng(size, rgba);
}

mkdirSync(join(assets, 'icons'), { recursive: true });
writeFileSync(join(assets, 'icon.png'), render(1024));
console.log(`wrote ${join(assets, 'icon.png')}`);
for (const size of linuxSizes) {
  const file = join(assets, 'icons', `${size}x${size}.png`);
  writeFileSync(file, render(size));
  console.log(`wrote ${file}`);
}
