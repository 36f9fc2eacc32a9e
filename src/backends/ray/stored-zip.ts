import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A minimal ZIP writer: entries in the order given, with a fixed timestamp (1980-01-01 00:00), no
 * owner, mode 0644 (0755 where the entry says it is executable), stored or deflated. The same
 * files always give the same bytes (for one zlib: Node's own), so a hash of the archive names its
 * content (Ray's package URIs are content-addressed).
 */
export interface ZipEntry {
  /** Path inside the archive, `/`-separated, no leading `/`. */
  name: string;
  data: Buffer;
  /** Unpacked with mode 0755 (Ray applies the mode it finds); otherwise 0644. */
  executable?: boolean;
}

const DOS_DATE_1980_01_01 = (0 << 9) | (1 << 5) | 1;
const unixMode = (executable?: boolean) => ((executable ? 0o100755 : 0o100644) << 16) >>> 0;
const VERSION_MADE_BY_UNIX = (3 << 8) | 20;
/** General purpose flag bit 11: the name is UTF-8 (readers assume CP437 otherwise). */
const UTF8_NAMES = 1 << 11;
const METHOD_STORED = 0;
const METHOD_DEFLATED = 8;
/** The ZIP versions a reader needs for a stored entry (1.0) and a deflated one (2.0). */
const versionNeeded = (method: number) => (method === METHOD_DEFLATED ? 20 : 10);
/** ZIP without ZIP64: at most this many entries and 4 GiB. */
export const ZIP_MAX_ENTRIES = 0xffff;

export function storedZip(entries: readonly ZipEntry[]): Buffer {
  return zipArchive(entries, { deflate: false });
}

/** `deflate`: each entry compressed (level 9) where that makes it smaller, stored otherwise. */
export function zipArchive(entries: readonly ZipEntry[], options: { deflate: boolean }): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, executable } of entries) {
    if (!name || name.startsWith('/') || name.includes('\\') || name.split('/').includes('..'))
      throw new Error(`bad zip entry name ${JSON.stringify(name)}`);
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const deflated = options.deflate && data.length > 0 ? deflateRawSync(data, { level: 9 }) : undefined;
    const method = deflated && deflated.length < data.length ? METHOD_DEFLATED : METHOD_STORED;
    const body = method === METHOD_DEFLATED && deflated ? deflated : data;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(versionNeeded(method), 4);
    const flags = /^[\x20-\x7e]*$/.test(name) ? 0 : UTF8_NAMES;
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10); // time 00:00:00
    local.writeUInt16LE(DOS_DATE_1980_01_01, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28); // extra length
    locals.push(local, nameBytes, body);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(VERSION_MADE_BY_UNIX, 4);
    central.writeUInt16LE(versionNeeded(method), 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(DOS_DATE_1980_01_01, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    // extra length, comment length, disk number, internal attributes: 0
    central.writeUInt32LE(unixMode(executable), 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  if (entries.length > ZIP_MAX_ENTRIES || offset > 0xffffffff)
    throw new Error('zip too large for a stored archive without ZIP64');
  const centralDir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralDir, end]);
}
