//! Records to and from plain byte streams: length-prefixed (framed) input appended
//! to a dataset, files of record indices, and gathers written out (one file per
//! record in a directory, framed or bare to a stream, or only their digest).
//!
//! Why here and not in the command line: these are the dataset's exchange formats
//! (what `barecat-records create --framed`, `gather --indices` and `gather -o`
//! read and write), with their own rules and errors, and programs other than the
//! command use them the same way.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use crate::core::crc::{crc32c, Crc32c};
use crate::core::error::{Error, IoContext, Result};
use crate::core::progress::Progress;
use crate::records::convert::name_width;
use crate::records::format::MAX_RECORD;
use crate::records::reader::{GatherOptions, Records};
use crate::records::writer::RecordWriter;

/// Open `path` for reading, `-` for standard input.
pub fn open_input(path: &Path) -> Result<Box<dyn Read>> {
    Ok(if path == Path::new("-") {
        Box::new(io::stdin())
    } else {
        Box::new(File::open(path).at(path)?)
    })
}

/// Append the length-prefixed records of `input` (each an 8-byte little-endian
/// length, then that many bytes) to `w`; `name` is what errors call the input.
/// `after_each` runs after each record with the number appended so far (for
/// periodic commits). Returns the number of records appended.
pub fn append_framed(
    w: &mut RecordWriter,
    input: impl Read,
    name: &Path,
    progress: &Progress,
    after_each: &mut dyn FnMut(&mut RecordWriter, u64) -> Result<()>,
) -> Result<u64> {
    let mut r = BufReader::with_capacity(1 << 20, input);
    let mut n = 0u64;
    let shown = || name.display().to_string();
    loop {
        let mut len = [0u8; 8];
        match r.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(Error::io(name, e)),
        }
        let len = u64::from_le_bytes(len);
        if len > MAX_RECORD {
            return Err(Error::Input {
                path: shown(),
                detail: format!("record {n} claims {len} bytes (a truncated or unframed input?)"),
            });
        }
        // Read straight into the writer's buffer.
        w.append_with(len as usize, |v: &mut Vec<u8>| -> Result<()> {
            let got = (&mut r).take(len).read_to_end(v).at(name)?;
            if got as u64 != len {
                return Err(Error::Input {
                    path: shown(),
                    detail: format!("record {n} is cut short (the input ends inside it)"),
                });
            }
            Ok(())
        })?;
        progress.add(1, len);
        n += 1;
        after_each(w, n)?;
    }
    Ok(n)
}

/// The indices of a text of ASCII digits and whitespace, in one pass over its bytes;
/// `None` for anything else (another character, a number past `u64`), which the
/// general parser then reads or reports.
fn parse_plain_indices(text: &[u8]) -> Option<Vec<u64>> {
    let mut out = Vec::with_capacity(text.len() / 8);
    let (mut cur, mut in_num) = (0u64, false);
    for &b in text {
        match b {
            b'0'..=b'9' => {
                cur = cur.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
                in_num = true;
            }
            b' ' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c => {
                if in_num {
                    out.push(cur);
                    (cur, in_num) = (0, false);
                }
            }
            _ => return None,
        }
    }
    if in_num {
        out.push(cur);
    }
    Some(out)
}

/// Record indices in `text`: decimal integers separated by white space. `name` is
/// what an error calls the text; it names the line of a word that is not an index.
pub fn parse_indices(text: &str, name: &Path) -> Result<Vec<u64>> {
    if let Some(idx) = parse_plain_indices(text.as_bytes()) {
        return Ok(idx);
    }
    let mut idx = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        for word in line.split_whitespace() {
            let i: u64 = word.parse().map_err(|_| Error::Input {
                path: name.display().to_string(),
                detail: format!(
                    "line {}: {word:?} is not a record index (a non-negative integer)",
                    ln + 1
                ),
            })?;
            idx.push(i);
        }
    }
    Ok(idx)
}

/// Record indices in the file at `path` (`-` for standard input): see
/// [`parse_indices`].
pub fn read_indices(path: &Path) -> Result<Vec<u64>> {
    let mut text = String::new();
    open_input(path)?.read_to_string(&mut text).at(path)?;
    parse_indices(&text, path)
}

/// Write the records at `indices` of `r` into the directory `dir` (created if need
/// be), one file per requested position, named by the position zero-padded to a
/// common width ([`name_width`]), so that name order is request order. An existing
/// file is an error unless `force`; a symbolic link is never followed. Returns the
/// number of files written.
pub fn gather_to_dir(
    r: &Records,
    indices: &[u64],
    opts: &GatherOptions,
    dir: &Path,
    force: bool,
    progress: &Progress,
) -> Result<u64> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::create_dir_all(dir).at(dir)?;
    let width = name_width(indices.len() as u64);
    let mut pos = 0usize;
    r.gather_blocks::<Error>(indices, opts, |_, batch| {
        for data in batch.iter() {
            let p = dir.join(format!("{pos:0width$}"));
            let mut o = std::fs::OpenOptions::new();
            o.write(true);
            if force {
                o.create(true).truncate(true);
            } else {
                o.create_new(true);
            }
            o.custom_flags(libc::O_NOFOLLOW);
            let mut f = o.open(&p).at(&p)?;
            f.write_all(data).at(&p)?;
            progress.add(1, data.len() as u64);
            pos += 1;
        }
        Ok(())
    })?;
    Ok(pos as u64)
}

/// How gathered records are written to a stream ([`gather_to_stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// The bytes of each record, back to back.
    Bare,
    /// Each record after its length (8 bytes, little-endian): what
    /// [`append_framed`] reads.
    Framed,
    /// One line per record: `POSITION INDEX LENGTH CRC32C` (hex), no bytes.
    Crcs,
}

/// Write the records at `indices` of `r` to `out` in `format`.
pub fn gather_to_stream(
    r: &Records,
    indices: &[u64],
    opts: &GatherOptions,
    out: &mut dyn Write,
    format: StreamFormat,
    progress: &Progress,
) -> Result<()> {
    let mut pos = 0usize;
    r.gather_blocks::<Error>(indices, opts, |block, batch| {
        for (k, data) in batch.iter().enumerate() {
            pos += 1;
            match format {
                StreamFormat::Crcs => {
                    let pos = pos - 1;
                    writeln!(
                        out,
                        "{pos} {} {} {:08x}",
                        block[k],
                        data.len(),
                        crc32c(data)
                    )
                    .map_err(Error::output)?;
                    continue;
                }
                StreamFormat::Framed => {
                    out.write_all(&(data.len() as u64).to_le_bytes())
                        .map_err(Error::output)?;
                }
                StreamFormat::Bare => {}
            }
            out.write_all(data).map_err(Error::output)?;
            progress.add(1, data.len() as u64);
        }
        Ok(())
    })
}

/// What [`gather_digest`] found: the number of records, their bytes, and the CRC32C
/// of all of them back to back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatherDigest {
    /// Records gathered.
    pub records: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The CRC32C of their bytes back to back.
    pub crc32c: u32,
}

/// Gather the records at `indices` of `r` and digest them instead of writing them
/// (to time a gather, or to compare two stores).
pub fn gather_digest(
    r: &Records,
    indices: &[u64],
    opts: &GatherOptions,
    progress: &Progress,
) -> Result<GatherDigest> {
    let (mut n, mut bytes, mut crc) = (0u64, 0u64, Crc32c::new());
    r.gather_blocks::<Error>(indices, opts, |block, batch| {
        for data in batch.iter() {
            crc.update(data);
            n += 1;
            bytes += data.len() as u64;
        }
        progress.add(block.len() as u64, 0);
        Ok(())
    })?;
    Ok(GatherDigest {
        records: n,
        bytes,
        crc32c: crc.value(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_words_and_a_bad_one_names_its_line() {
        let p = Path::new("idx");
        assert_eq!(parse_indices("1 2\n\t3\r\n", p).unwrap(), [1, 2, 3]);
        assert_eq!(parse_indices("+4 5", p).unwrap(), [4, 5]);
        let e = parse_indices("1\n2 three\n", p).unwrap_err().to_string();
        assert_eq!(
            e,
            "idx: line 2: \"three\" is not a record index (a non-negative integer)"
        );
        assert!(parse_indices("99999999999999999999", p).is_err());
    }
}
