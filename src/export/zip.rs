//! A streaming zip writer for exports.
//!
//! Every entry's CRC-32 and sizes are known before its local header is written (the
//! content comes from the shards' memory maps and is checked first), so entries are
//! written once, front to back, with complete local headers: the same bytes go to
//! a file or to a pipe, no seeking, no data descriptors. The one exception is a
//! deflated entry too large to compress in memory first, which gets a (Zip64) data
//! descriptor, as the format provides.
//!
//! Zip64 records are used where a value does not fit: an entry of 4 GiB or more
//! (sizes in the local and central headers), an entry starting past 4 GiB, more than
//! 65,534 entries or a central directory past 4 GiB (the Zip64 end records).
//!
//! Each entry has the Unix mode in its external attributes (made by "Unix"), the
//! modification time in UTC as an extended-timestamp extra field (0x5455, read by
//! Info-ZIP and libarchive), and the DOS date and time, also in UTC so that the
//! output does not depend on the time zone of the machine. Names are UTF-8 (flag
//! bit 11 set when not ASCII); directories end in `/`.

use std::io::{self, Write};

/// Below these values a field fits in its 16- or 32-bit slot.
const MAX16: u64 = 0xFFFF;
const MAX32: u64 = 0xFFFF_FFFF;

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const DESCRIPTOR_SIG: u32 = 0x0807_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD64_SIG: u32 = 0x0606_4b50;
const LOCATOR64_SIG: u32 = 0x0706_4b50;

const STORED: u16 = 0;
const DEFLATED: u16 = 8;
const FLAG_DESCRIPTOR: u16 = 1 << 3;
const FLAG_UTF8: u16 = 1 << 11;
/// Made by: Unix (3), specification 4.5.
const MADE_BY: u16 = (3 << 8) | 45;

/// File-type bits of `st_mode`.
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;

/// Metadata of one zip entry.
#[derive(Debug, Clone, Copy)]
pub struct EntryMeta {
    /// Permission bits (0o7777 at most).
    pub perms: u32,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: Option<i64>,
}

/// Writes a zip archive to `W`. Call [`ZipWriter::finish`] at the end.
pub struct ZipWriter<W: Write> {
    out: W,
    pos: u64,
    central: Vec<u8>,
    count: u64,
}

struct Sizes {
    crc: u32,
    compressed: u64,
    size: u64,
}

impl<W: Write> ZipWriter<W> {
    /// A zip writer whose entries go to `out` (offsets count from the first byte written).
    pub fn new(out: W) -> ZipWriter<W> {
        ZipWriter {
            out,
            pos: 0,
            central: Vec::new(),
            count: 0,
        }
    }

    /// Number of entries written so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when no entry was written yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// A directory entry (`name/`).
    pub fn add_dir(&mut self, name: &str, meta: EntryMeta) -> io::Result<()> {
        let name = format!("{name}/");
        let sizes = Sizes {
            crc: 0,
            compressed: 0,
            size: 0,
        };
        self.entry(
            &name,
            S_IFDIR | meta.perms,
            meta.mtime_ns,
            STORED,
            &sizes,
            false,
        )
    }

    /// A file stored without compression; `crc32` is the CRC-32 of `data`.
    pub fn add_stored(
        &mut self,
        name: &str,
        meta: EntryMeta,
        data: &[u8],
        crc32: u32,
    ) -> io::Result<()> {
        let sizes = Sizes {
            crc: crc32,
            compressed: data.len() as u64,
            size: data.len() as u64,
        };
        self.entry(
            name,
            S_IFREG | meta.perms,
            meta.mtime_ns,
            STORED,
            &sizes,
            false,
        )?;
        self.put(data)
    }

    /// A file compressed ahead of time: `deflated` is the raw deflate stream of
    /// `size` bytes whose CRC-32 is `crc32`.
    pub fn add_deflated(
        &mut self,
        name: &str,
        meta: EntryMeta,
        deflated: &[u8],
        size: u64,
        crc32: u32,
    ) -> io::Result<()> {
        let sizes = Sizes {
            crc: crc32,
            compressed: deflated.len() as u64,
            size,
        };
        self.entry(
            name,
            S_IFREG | meta.perms,
            meta.mtime_ns,
            DEFLATED,
            &sizes,
            false,
        )?;
        self.put(deflated)
    }

    /// A file compressed while it is written (for files too large to compress in
    /// memory first): the sizes follow the data in a Zip64 data descriptor.
    pub fn add_deflating(
        &mut self,
        name: &str,
        meta: EntryMeta,
        data: &[u8],
        crc32: u32,
        level: u32,
    ) -> io::Result<()> {
        check_name(name)?;
        let start = self.pos;
        let mut sizes = Sizes {
            crc: crc32,
            compressed: 0,
            size: data.len() as u64,
        };
        let header = local_header(name, DEFLATED, meta.mtime_ns, &sizes, true);
        self.put(&header)?;
        let body_start = self.pos;
        {
            let counter = Counter {
                out: &mut self.out,
                n: 0,
            };
            let mut enc =
                flate2::write::DeflateEncoder::new(counter, flate2::Compression::new(level));
            for chunk in data.chunks(1 << 20) {
                enc.write_all(chunk)?;
            }
            let counter = enc.finish()?;
            self.pos += counter.n;
        }
        sizes.compressed = self.pos - body_start;
        let mut dd = Vec::with_capacity(24);
        put32(&mut dd, DESCRIPTOR_SIG);
        put32(&mut dd, crc32);
        put64(&mut dd, sizes.compressed);
        put64(&mut dd, sizes.size);
        self.put(&dd)?;
        self.central_record(
            name,
            S_IFREG | meta.perms,
            meta.mtime_ns,
            DEFLATED,
            &sizes,
            start,
            true,
        );
        Ok(())
    }

    fn entry(
        &mut self,
        name: &str,
        mode: u32,
        mtime_ns: Option<i64>,
        method: u16,
        sizes: &Sizes,
        descriptor: bool,
    ) -> io::Result<()> {
        check_name(name)?;
        let start = self.pos;
        let header = local_header(name, method, mtime_ns, sizes, descriptor);
        self.put(&header)?;
        self.central_record(name, mode, mtime_ns, method, sizes, start, descriptor);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn central_record(
        &mut self,
        name: &str,
        mode: u32,
        mtime_ns: Option<i64>,
        method: u16,
        sizes: &Sizes,
        offset: u64,
        descriptor: bool,
    ) {
        let mut z64 = Vec::new();
        if sizes.size >= MAX32 {
            put64(&mut z64, sizes.size);
        }
        if sizes.compressed >= MAX32 {
            put64(&mut z64, sizes.compressed);
        }
        if offset >= MAX32 {
            put64(&mut z64, offset);
        }
        let ut = extended_timestamp(mtime_ns);
        let mut extra = Vec::new();
        if !z64.is_empty() {
            put16(&mut extra, 0x0001);
            put16(&mut extra, z64.len() as u16);
            extra.extend_from_slice(&z64);
        }
        extra.extend_from_slice(&ut);
        let (time, date) = dos_time(mtime_ns);
        let c = &mut self.central;
        put32(c, CENTRAL_SIG);
        put16(c, MADE_BY);
        put16(c, version_needed(!z64.is_empty() || descriptor));
        put16(c, flags(name, descriptor));
        put16(c, method);
        put16(c, time);
        put16(c, date);
        put32(c, sizes.crc);
        put32(c, sizes.compressed.min(MAX32) as u32);
        put32(c, sizes.size.min(MAX32) as u32);
        put16(c, name.len() as u16);
        put16(c, extra.len() as u16);
        put16(c, 0); // comment
        put16(c, 0); // disk
        put16(c, 0); // internal attributes
        let dos_dir = if mode & S_IFDIR == S_IFDIR { 0x10 } else { 0 };
        put32(c, (mode << 16) | dos_dir);
        put32(c, offset.min(MAX32) as u32);
        c.extend_from_slice(name.as_bytes());
        c.extend_from_slice(&extra);
        self.count += 1;
    }

    /// Write the central directory and the end records; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        let cd_start = self.pos;
        let central = std::mem::take(&mut self.central);
        self.put(&central)?;
        let cd_size = central.len() as u64;
        let mut end = Vec::with_capacity(98);
        if self.count >= MAX16 || cd_start >= MAX32 || cd_size >= MAX32 {
            let eocd64_at = self.pos;
            put32(&mut end, EOCD64_SIG);
            put64(&mut end, 44);
            put16(&mut end, MADE_BY);
            put16(&mut end, 45);
            put32(&mut end, 0);
            put32(&mut end, 0);
            put64(&mut end, self.count);
            put64(&mut end, self.count);
            put64(&mut end, cd_size);
            put64(&mut end, cd_start);
            put32(&mut end, LOCATOR64_SIG);
            put32(&mut end, 0);
            put64(&mut end, eocd64_at);
            put32(&mut end, 1);
        }
        put32(&mut end, EOCD_SIG);
        put16(&mut end, 0);
        put16(&mut end, 0);
        put16(&mut end, self.count.min(MAX16) as u16);
        put16(&mut end, self.count.min(MAX16) as u16);
        put32(&mut end, cd_size.min(MAX32) as u32);
        put32(&mut end, cd_start.min(MAX32) as u32);
        put16(&mut end, 0);
        self.put(&end)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Counts what passes through to the output.
struct Counter<'a, W: Write> {
    out: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn local_header(
    name: &str,
    method: u16,
    mtime_ns: Option<i64>,
    sizes: &Sizes,
    descriptor: bool,
) -> Vec<u8> {
    // Zip64 sizes in the local header when a size does not fit, and always with a
    // data descriptor (the sizes are not known yet, and may need 64 bits).
    let zip64 = descriptor || sizes.size >= MAX32 || sizes.compressed >= MAX32;
    let ut = extended_timestamp(mtime_ns);
    let (time, date) = dos_time(mtime_ns);
    let extra_len = if zip64 { 20 } else { 0 } + ut.len();
    let mut h = Vec::with_capacity(30 + name.len() + extra_len);
    put32(&mut h, LOCAL_SIG);
    put16(&mut h, version_needed(zip64));
    put16(&mut h, flags(name, descriptor));
    put16(&mut h, method);
    put16(&mut h, time);
    put16(&mut h, date);
    if descriptor {
        put32(&mut h, 0);
    } else {
        put32(&mut h, sizes.crc);
    }
    if zip64 {
        put32(&mut h, MAX32 as u32);
        put32(&mut h, MAX32 as u32);
    } else {
        put32(&mut h, sizes.compressed as u32);
        put32(&mut h, sizes.size as u32);
    }
    put16(&mut h, name.len() as u16);
    put16(&mut h, extra_len as u16);
    h.extend_from_slice(name.as_bytes());
    if zip64 {
        put16(&mut h, 0x0001);
        put16(&mut h, 16);
        if descriptor {
            put64(&mut h, 0);
            put64(&mut h, 0);
        } else {
            put64(&mut h, sizes.size);
            put64(&mut h, sizes.compressed);
        }
    }
    h.extend_from_slice(&ut);
    h
}

/// Names are stored with a 16-bit length.
fn check_name(name: &str) -> io::Result<()> {
    if name.len() > 60_000 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path too long for a zip entry",
        ));
    }
    Ok(())
}

fn version_needed(zip64: bool) -> u16 {
    if zip64 {
        45
    } else {
        20
    }
}

fn flags(name: &str, descriptor: bool) -> u16 {
    let mut f = 0;
    if !name.is_ascii() {
        f |= FLAG_UTF8;
    }
    if descriptor {
        f |= FLAG_DESCRIPTOR;
    }
    f
}

/// The extended-timestamp extra field (0x5455) with the modification time, when it
/// fits the field's 32-bit seconds (1970 to 2038).
fn extended_timestamp(mtime_ns: Option<i64>) -> Vec<u8> {
    let Some(ns) = mtime_ns else {
        return Vec::new();
    };
    let secs = ns.div_euclid(1_000_000_000);
    if !(0..=i32::MAX as i64).contains(&secs) {
        return Vec::new();
    }
    let mut v = Vec::with_capacity(9);
    put16(&mut v, 0x5455);
    put16(&mut v, 5);
    v.push(1); // modification time present
    put32(&mut v, secs as u32);
    v
}

/// DOS (time, date) of a UTC timestamp, clamped to the range DOS can hold
/// (1980 to 2107); 1980-01-01 00:00 when there is none.
pub fn dos_time(mtime_ns: Option<i64>) -> (u16, u16) {
    const MIN: (u16, u16) = (0, (1 << 5) | 1);
    let Some(ns) = mtime_ns else {
        return MIN;
    };
    let secs = ns.div_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if y < 1980 {
        return MIN;
    }
    if y > 2107 {
        return ((23 << 11) | (59 << 5) | 29, (127 << 9) | (12 << 5) | 31);
    }
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let time = ((h as u16) << 11) | ((mi as u16) << 5) | (s as u16 / 2);
    let date = (((y - 1980) as u16) << 9) | ((m as u16) << 5) | d as u16;
    (time, date)
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Read};

    fn crc(data: &[u8]) -> u32 {
        crc32fast::hash(data)
    }

    #[test]
    fn calendar() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        // 2020-09-13 12:26:40 UTC
        let (t, d) = dos_time(Some(1_600_000_000_000_000_000));
        assert_eq!(d, (40 << 9) | (9 << 5) | 13);
        assert_eq!(t, (12 << 11) | (26 << 5) | 20);
        assert_eq!(dos_time(None), (0, 33));
        assert_eq!(dos_time(Some(-5)), (0, 33));
    }

    #[test]
    fn the_zip_crate_reads_it_back() {
        let mut w = ZipWriter::new(Vec::new());
        let meta = EntryMeta {
            perms: 0o640,
            mtime_ns: Some(1_600_000_000_500_000_000),
        };
        w.add_dir("d", meta).unwrap();
        w.add_stored("d/a.txt", meta, b"hello", crc(b"hello"))
            .unwrap();
        let data = b"abcabcabc".repeat(1000);
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        enc.write_all(&data).unwrap();
        let deflated = enc.finish().unwrap();
        w.add_deflated("d/ü.bin", meta, &deflated, data.len() as u64, crc(&data))
            .unwrap();
        w.add_deflating("big", meta, &data, crc(&data), 1).unwrap();
        let bytes = w.finish().unwrap();
        let mut z = ::zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(z.len(), 4);
        let d = z.by_index(0).unwrap();
        assert!(d.is_dir());
        assert_eq!(d.unix_mode(), Some(0o40640));
        drop(d);
        for (i, want) in [(1, &b"hello"[..]), (2, &data[..]), (3, &data[..])] {
            let mut f = z.by_index(i).unwrap();
            let mut got = Vec::new();
            f.read_to_end(&mut got).unwrap();
            assert_eq!(got, want, "{:?}", f.name());
            assert_eq!(f.unix_mode(), Some(0o100640));
        }
        assert_eq!(z.by_index(2).unwrap().name().unwrap(), "d/ü.bin");
    }

    #[test]
    fn zip64_end_records_for_many_entries() {
        let mut w = ZipWriter::new(Vec::new());
        let meta = EntryMeta {
            perms: 0o644,
            mtime_ns: None,
        };
        for i in 0..70_000u32 {
            w.add_stored(&format!("{i}"), meta, b"", 0).unwrap();
        }
        let bytes = w.finish().unwrap();
        let z = ::zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(z.len(), 70_000);
    }
}
