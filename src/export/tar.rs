//! A tar writer for exports: POSIX ustar headers, with PAX extended headers
//! (`path`, `size`, `mtime`, `uid`, `gid`) for the values ustar cannot hold: names
//! that do not fit its 100 + 155 bytes, sizes of 8 GiB or more, modification times
//! with a fraction of a second or outside 1970..2242 (whole seconds before 1970),
//! ids over 2,097,151.
//!
//! Headers come from the `tar` crate; file bytes go from the shards' memory maps
//! straight to the output, without an intermediate copy.

use std::io::{self, Write};

use tar::{Builder, EntryType, Header};

/// Largest value of an 11-digit octal field (size, mtime).
const MAX_OCTAL11: u64 = 0o77777777777;
/// Largest value of a 7-digit octal field (uid, gid).
const MAX_OCTAL7: u64 = 0o7777777;

/// Metadata of one tar entry.
#[derive(Debug, Clone, Copy)]
pub struct EntryMeta {
    /// Permission bits (0o7777 at most).
    pub perms: u32,
    /// Owner user id.
    pub uid: u32,
    /// Owner group id.
    pub gid: u32,
    /// Modification time, nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: i64,
}

/// Writes a tar archive to `W`. Call [`TarWriter::finish`] at the end.
pub struct TarWriter<W: Write> {
    builder: Builder<W>,
}

impl<W: Write> TarWriter<W> {
    /// A tar writer appending to `out`.
    pub fn new(out: W) -> TarWriter<W> {
        TarWriter {
            builder: Builder::new(out),
        }
    }

    /// A directory entry (`path/`).
    pub fn add_dir(&mut self, path: &str, meta: EntryMeta) -> io::Result<()> {
        let name = format!("{path}/");
        self.header(&name, EntryType::Directory, 0, &meta)
    }

    /// A regular file with its whole content.
    pub fn add_file(&mut self, path: &str, meta: EntryMeta, data: &[u8]) -> io::Result<()> {
        self.header(path, EntryType::Regular, data.len() as u64, &meta)?;
        let out = self.builder.get_mut();
        out.write_all(data)?;
        let pad = (512 - data.len() % 512) % 512;
        out.write_all(&[0u8; 512][..pad])
    }

    fn header(
        &mut self,
        name: &str,
        kind: EntryType,
        size: u64,
        meta: &EntryMeta,
    ) -> io::Result<()> {
        let mut pax = Vec::new();
        let mut h = Header::new_ustar();
        h.set_entry_type(kind);
        h.set_mode(meta.perms);
        if u64::from(meta.uid) > MAX_OCTAL7 {
            pax_record(&mut pax, "uid", &meta.uid.to_string());
            h.set_uid(0);
        } else {
            h.set_uid(meta.uid.into());
        }
        if u64::from(meta.gid) > MAX_OCTAL7 {
            pax_record(&mut pax, "gid", &meta.gid.to_string());
            h.set_gid(0);
        } else {
            h.set_gid(meta.gid.into());
        }
        let (secs, frac) = super::split_ns(meta.mtime_ns);
        if secs < 0 {
            // Before 1970: whole seconds. Readers disagree on negative fractions
            // (GNU tar reads "-1.5" as -1.5 s, libarchive as -0.5 s).
            pax_record(&mut pax, "mtime", &secs.to_string());
        } else if frac != 0 || secs as u64 > MAX_OCTAL11 {
            pax_record(&mut pax, "mtime", &pax_time(meta.mtime_ns));
        }
        h.set_mtime(secs.clamp(0, MAX_OCTAL11 as i64) as u64);
        if size > MAX_OCTAL11 {
            pax_record(&mut pax, "size", &size.to_string());
        }
        h.set_size(size);
        let ustar = h.as_ustar_mut().expect("a ustar header");
        if !set_ustar_name(&mut ustar.name, &mut ustar.prefix, name) {
            pax_record(&mut pax, "path", name);
            let cut = floor_char_boundary(name, 100);
            ustar.name[..cut].copy_from_slice(&name.as_bytes()[..cut]);
        }
        h.set_cksum();
        if !pax.is_empty() {
            let mut x = Header::new_ustar();
            x.set_entry_type(EntryType::XHeader);
            x.set_mode(0o644);
            x.set_mtime(secs.clamp(0, MAX_OCTAL11 as i64) as u64);
            x.set_size(pax.len() as u64);
            let base = name.trim_end_matches('/');
            let base = &base[base.rfind('/').map_or(0, |i| i + 1)..];
            let xname = format!("PaxHeader/{base}");
            let cut = floor_char_boundary(&xname, 100);
            let u = x.as_ustar_mut().expect("a ustar header");
            u.name[..cut].copy_from_slice(&xname.as_bytes()[..cut]);
            x.set_cksum();
            self.builder.append(&x, &pax[..])?;
        }
        self.builder.get_mut().write_all(h.as_bytes())
    }

    /// Write the end-of-archive blocks and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        let mut out = self.builder.into_inner()?;
        out.flush()?;
        Ok(out)
    }
}

/// Put `name` into ustar's `name` (100 bytes) or `prefix` + `/` + `name` (155 + 100)
/// fields. False when it does not fit.
fn set_ustar_name(field: &mut [u8; 100], prefix: &mut [u8; 155], name: &str) -> bool {
    let b = name.as_bytes();
    if b.len() <= 100 {
        field[..b.len()].copy_from_slice(b);
        return true;
    }
    // The longest prefix (ending before a '/') that fits, with a name that fits.
    let limit = b.len().min(156);
    let Some(i) = b[..limit].iter().rposition(|&c| c == b'/') else {
        return false;
    };
    let (p, n) = (&b[..i], &b[i + 1..]);
    if p.is_empty() || n.is_empty() || n.len() > 100 || p.len() > 155 {
        return false;
    }
    prefix[..p.len()].copy_from_slice(p);
    field[..n.len()].copy_from_slice(n);
    true
}

/// The largest index `<= max` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Append one PAX record, `"<len> <key>=<value>\n"`, where `<len>` counts the
/// whole record including its own digits.
fn pax_record(out: &mut Vec<u8>, key: &str, value: &str) {
    let base = key.len() + value.len() + 3;
    let mut len = base + 1;
    while len != base + len.to_string().len() {
        len = base + len.to_string().len();
    }
    out.extend_from_slice(format!("{len} {key}={value}\n").as_bytes());
}

/// A PAX time value: seconds, and the fraction without trailing zeros.
fn pax_time(ns: i64) -> String {
    let neg = ns < 0;
    let abs = (ns as i128).unsigned_abs();
    let secs = abs / 1_000_000_000;
    let frac = abs % 1_000_000_000;
    let sign = if neg { "-" } else { "" };
    if frac == 0 {
        format!("{sign}{secs}")
    } else {
        let f = format!("{frac:09}");
        format!("{sign}{secs}.{}", f.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn records_count_their_own_length() {
        let mut v = Vec::new();
        pax_record(&mut v, "path", "abc");
        assert_eq!(v, b"12 path=abc\n");
        let mut v = Vec::new();
        let long = "x".repeat(95);
        pax_record(&mut v, "path", &long);
        // 95 + 4 + 3 = 102 plus 3 digits = 105
        assert_eq!(v.len(), 105);
        assert!(v.starts_with(b"105 path="));
        assert_eq!(pax_time(1_500_000_000), "1.5");
        assert_eq!(pax_time(-1_500_000_000), "-1.5");
        assert_eq!(pax_time(2_000_000_000), "2");
        assert_eq!(pax_time(1_000_000_001), "1.000000001");
    }

    #[test]
    fn ustar_name_split() {
        let mut n = [0u8; 100];
        let mut p = [0u8; 155];
        let long = format!("{}/{}", "d".repeat(150), "f".repeat(90));
        assert!(set_ustar_name(&mut n, &mut p, &long));
        assert_eq!(&p[..150], "d".repeat(150).as_bytes());
        assert_eq!(&n[..90], "f".repeat(90).as_bytes());
        let mut n = [0u8; 100];
        let mut p = [0u8; 155];
        assert!(!set_ustar_name(&mut n, &mut p, &"x".repeat(101)));
        assert!(!set_ustar_name(
            &mut n,
            &mut p,
            &format!("{}/{}", "d".repeat(200), "f")
        ));
    }

    #[test]
    fn the_tar_crate_reads_it_back() {
        let mut w = TarWriter::new(Vec::new());
        let meta = EntryMeta {
            perms: 0o640,
            uid: 3_000_000,
            gid: 7,
            mtime_ns: 1_600_000_000_250_000_000,
        };
        let long = format!("{}/{}", "d".repeat(300), "é".repeat(60));
        w.add_dir("dir", meta).unwrap();
        w.add_file("dir/a", meta, b"hello").unwrap();
        w.add_file(&long, meta, b"x").unwrap();
        let bytes = w.finish().unwrap();
        let mut ar = tar::Archive::new(&bytes[..]);
        let mut seen = Vec::new();
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            // The uid does not fit ustar: it comes from the PAX header.
            assert_eq!(e.header().uid().unwrap(), 3_000_000);
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            seen.push((path, data));
        }
        assert_eq!(seen[0].0, "dir/");
        assert_eq!(seen[1], ("dir/a".to_string(), b"hello".to_vec()));
        assert_eq!(seen[2], (long, b"x".to_vec()));
    }
}
