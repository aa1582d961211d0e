import { inflateSync } from 'node:zlib';

/** A decoded PNG: its size and RGBA pixels, row by row. */
export interface Image {
  width: number;
  height: number;
  /** RGBA of the pixel at (x, y). */
  pixel(x: number, y: number): [number, number, number, number];
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Reads the PNGs our charts are: 8 bits per channel, RGB or RGBA (or grey with alpha), not
 * interlaced; anything else is an error, so a test never passes on a picture it did not read.
 */
export function decodePng(bytes: Uint8Array): Image {
  const data = Buffer.from(bytes);
  if (!data.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let at = 8;
  let width = 0;
  let height = 0;
  let colourType = 0;
  const idat: Buffer[] = [];
  while (at < data.length) {
    const length = data.readUInt32BE(at);
    const type = data.toString('ascii', at + 4, at + 8);
    const chunk = data.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = chunk.readUInt32BE(0);
      height = chunk.readUInt32BE(4);
      const depth = chunk[8];
      colourType = chunk[9] ?? 0;
      if (depth !== 8 || chunk[12] !== 0) throw new Error(`unsupported PNG: depth ${depth}, interlace ${chunk[12]}`);
    } else if (type === 'IDAT') idat.push(chunk);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  const channels = { 2: 3, 4: 2, 6: 4, 0: 1 }[colourType];
  if (!channels) throw new Error(`unsupported PNG colour type ${colourType}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x] ?? 0;
      const left = x >= channels ? (pixels[y * stride + x - channels] ?? 0) : 0;
      const up = y > 0 ? (pixels[(y - 1) * stride + x] ?? 0) : 0;
      const upLeft = x >= channels && y > 0 ? (pixels[(y - 1) * stride + x - channels] ?? 0) : 0;
      let predicted = 0;
      if (filter === 1) predicted = left;
      else if (filter === 2) predicted = up;
      else if (filter === 3) predicted = Math.floor((left + up) / 2);
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = (value + predicted) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel(x, y) {
      const i = y * stride + x * channels;
      if (channels === 4) return [pixels[i] ?? 0, pixels[i + 1] ?? 0, pixels[i + 2] ?? 0, pixels[i + 3] ?? 0];
      if (channels === 3) return [pixels[i] ?? 0, pixels[i + 1] ?? 0, pixels[i + 2] ?? 0, 255];
      const grey = pixels[i] ?? 0;
      return [grey, grey, grey, channels === 2 ? (pixels[i + 1] ?? 0) : 255];
    },
  };
}
