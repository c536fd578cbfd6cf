//! Gzip streams member by member, as `gzip -d` and bsdtar read them: any number of
//! members back to back, and bytes after the last member that do not start
//! another one (tape padding, a signature, garbage) ignored with a note instead
//! of failing the whole input.
//!
//! Why not `flate2::read::MultiGzDecoder`: it takes every byte after a member for
//! the header of the next one, so a `.tar.gz` with a few bytes appended (whose
//! tar is complete inside the first member) is refused as "invalid gzip header".

use std::io::{self, BufRead, BufReader, Read};

use super::Notes;

/// Counts the bytes taken from the input.
struct Counting<R> {
    inner: R,
    taken: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n as u64;
        Ok(n)
    }
}

/// A reader of the decompressed bytes of a gzip stream.
pub struct GzipDecoder<R: Read> {
    /// The member being decoded (`None` between members and at the end).
    member: Option<flate2::bufread::GzDecoder<BufReader<Counting<R>>>>,
    /// The input between members.
    idle: Option<BufReader<Counting<R>>>,
    members: u64,
    notes: Notes,
}

impl<R: Read> GzipDecoder<R> {
    /// Decode every gzip member of `inner` in turn; bytes after the last one are noted in
    /// `notes`.
    pub fn new(inner: R, notes: Notes) -> GzipDecoder<R> {
        GzipDecoder {
            member: None,
            idle: Some(BufReader::with_capacity(
                64 << 10,
                Counting { inner, taken: 0 },
            )),
            members: 0,
            notes,
        }
    }

    /// Start the next member; false at the end of the stream.
    fn next_member(&mut self) -> io::Result<bool> {
        let Some(mut input) = self.idle.take() else {
            return Ok(false);
        };
        let head = input.fill_buf()?;
        if head.is_empty() {
            return Ok(false);
        }
        let starts_member = head[0] == 0x1f && (head.len() < 2 || head[1] == 0x8b);
        let zeros = head.iter().all(|&b| b == 0);
        if self.members > 0 && !starts_member {
            let at = input.get_ref().taken - input.buffer().len() as u64;
            self.notes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!(
                    "{} after the gzip stream (from byte {at}) ignored, as gzip -d and bsdtar \
                 ignore them",
                    if zeros {
                        "zero bytes"
                    } else {
                        "bytes that are not gzip data"
                    }
                ));
            return Ok(false);
        }
        self.members += 1;
        self.member = Some(flate2::bufread::GzDecoder::new(input));
        Ok(true)
    }
}

impl<R: Read> Read for GzipDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(m) = &mut self.member {
                let n = m.read(buf).map_err(|e| {
                    let at = m.get_ref().get_ref().taken - m.get_ref().buffer().len() as u64;
                    io::Error::new(e.kind(), format!("gzip: {e} (near byte {at})"))
                })?;
                if n > 0 {
                    return Ok(n);
                }
                let m = self.member.take().expect("a member is being read");
                self.idle = Some(m.into_inner());
            }
            if !self.next_member()? {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn members_and_trailing_bytes() {
        let mut s = gz(b"one ");
        s.extend(gz(b"two"));
        let notes = Notes::default();
        let mut out = Vec::new();
        GzipDecoder::new(&s[..], notes.clone())
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"one two");
        assert!(notes.lock().unwrap().is_empty());
        let n = s.len();
        s.extend(b"garbage");
        out.clear();
        GzipDecoder::new(&s[..], notes.clone())
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"one two");
        let notes = notes.lock().unwrap();
        assert!(notes[0].contains(&format!("from byte {n}")), "{notes:?}");
        // A truncated member is an error.
        let s = gz(b"some data here");
        let mut out = Vec::new();
        assert!(GzipDecoder::new(&s[..s.len() - 3], Notes::default())
            .read_to_end(&mut out)
            .is_err());
    }
}
