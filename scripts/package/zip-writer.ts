// A minimal ZIP writer (deflate, UTF-8 names, Unix modes): enough for a Functions deployment package,
// without a dependency. Entries are written as they come, so memory holds one file at a time.
// No ZIP64: a package over 4 GiB or 65,535 files is refused, which a Functions package never nears.
import { closeSync, openSync, writeSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';

interface CentralEntry {
  name: Buffer;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
  mode: number;
  method: number;
}

const UTF8_NAMES = 0x0800;
const DEFLATE = 8;
const STORE = 0;
/** 1980-01-01 00:00 in DOS format: fixed, so the same input gives the same bytes. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export class ZipWriter {
  private readonly fd: number;
  private offset = 0;
  private readonly entries: CentralEntry[] = [];

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  add(name: string, data: Buffer, mode = 0o644): void {
    if (this.entries.length === 0xffff)
      throw new Error('more than 65,535 entries need ZIP64, which this writer does not do');
    const deflated = deflateRawSync(data, { level: 9 });
    const method = deflated.length < data.length ? DEFLATE : STORE;
    const body = method === DEFLATE ? deflated : data;
    const entry: CentralEntry = {
      name: Buffer.from(name, 'utf8'),
      crc: crc32(data),
      compressedSize: body.length,
      size: data.length,
      offset: this.offset,
      mode,
      method,
    };
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(UTF8_NAMES, 6);
    header.writeUInt16LE(method, 8);
    header.writeUInt16LE(DOS_TIME, 10);
    header.writeUInt16LE(DOS_DATE, 12);
    header.writeUInt32LE(entry.crc, 14);
    header.writeUInt32LE(entry.compressedSize, 18);
    header.writeUInt32LE(entry.size, 22);
    header.writeUInt16LE(entry.name.length, 26);
    header.writeUInt16LE(0, 28);
    this.write(header, entry.name, body);
    this.entries.push(entry);
  }

  /** Writes the central directory and closes the file; returns the archive's size in bytes. */
  close(): number {
    const start = this.offset;
    for (const entry of this.entries) {
      const header = Buffer.alloc(46);
      header.writeUInt32LE(0x02014b50, 0);
      header.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the external attributes are a mode
      header.writeUInt16LE(20, 6);
      header.writeUInt16LE(UTF8_NAMES, 8);
      header.writeUInt16LE(entry.method, 10);
      header.writeUInt16LE(DOS_TIME, 12);
      header.writeUInt16LE(DOS_DATE, 14);
      header.writeUInt32LE(entry.crc, 16);
      header.writeUInt32LE(entry.compressedSize, 20);
      header.writeUInt32LE(entry.size, 24);
      header.writeUInt16LE(entry.name.length, 28);
      header.writeUInt32LE(((0o100000 | entry.mode) << 16) >>> 0, 38);
      header.writeUInt32LE(entry.offset, 42);
      this.write(header, entry.name);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.offset - start, 12);
    end.writeUInt32LE(start, 16);
    this.write(end);
    closeSync(this.fd);
    return this.offset;
  }

  private write(...parts: Buffer[]): void {
    for (const part of parts) {
      writeSync(this.fd, part);
      this.offset += part.length;
      if (this.offset > 0xffffffff)
        throw new Error('a package over 4 GiB needs ZIP64, which this writer does not do');
    }
  }
}
