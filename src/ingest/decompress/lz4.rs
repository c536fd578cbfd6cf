//! LZ4 streams (`.tar.lz4`): the frame format of the `lz4` tool (every block size,
//! independent or linked blocks, block and content checksums, a content size),
//! the legacy format of `lz4 -l`, skippable frames, and any number of them back
//! to back, decoded as they stream in.
//!
//! Why here and not `lz4_flex::frame`: its decoder takes a stream that ends in
//! the middle of a frame for a clean end (a truncated `.tar.lz4` would look whole
//! up to the cut), stops at the end of the first frame, and fails on skippable
//! frames, all of which `lz4 -d` and bsdtar handle. The frame layer is small; the
//! block decoder (the part worth fuzzing for years) is `lz4_flex`'s.

use std::io::{self, Read};

use std::hash::Hasher;

use twox_hash::XxHash32;

/// Magic number of an LZ4 frame (little-endian bytes `04 22 4d 18`).
pub const FRAME_MAGIC: u32 = 0x184D_2204;
/// Magic number of the legacy format (`lz4 -l`).
pub const LEGACY_MAGIC: u32 = 0x184C_2102;
/// Skippable frames (shared with zstd) have magic numbers in this range.
pub const SKIPPABLE: std::ops::RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;

/// Block size of the legacy format.
const LEGACY_BLOCK: usize = 8 << 20;
/// Back-reference window of linked blocks.
const WINDOW: usize = 64 << 10;

fn bad(detail: impl Into<String>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("lz4: {}", detail.into()),
    )
}

fn cut(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("lz4: the stream ends inside {what}: it is truncated"),
    )
}

/// What the decoder is in the middle of.
enum State {
    /// Between frames: the next thing is a magic number or the end.
    Between,
    Frame(Frame),
    Legacy,
    Done,
}

struct Frame {
    linked: bool,
    block_checksum: bool,
    content_checksum: bool,
    content_size: Option<u64>,
    max_block: usize,
    hasher: XxHash32,
    produced: u64,
}

/// A reader of the decompressed bytes of an LZ4 stream.
pub struct Lz4Decoder<R> {
    inner: R,
    state: State,
    /// Decoded bytes: the window of linked blocks (`out[..start]`, kept as the
    /// dictionary) and the bytes not yet read (`out[pos..]`).
    out: Vec<u8>,
    pos: usize,
    src: Vec<u8>,
    frames: u64,
    /// A magic number read by the legacy decoder, to be read again.
    pushback: Option<[u8; 4]>,
}

impl<R: Read> Lz4Decoder<R> {
    /// Decode the LZ4 frames of `inner` in turn.
    pub fn new(inner: R) -> Lz4Decoder<R> {
        Lz4Decoder {
            inner,
            state: State::Between,
            out: Vec::new(),
            pos: 0,
            src: Vec::new(),
            frames: 0,
            pushback: None,
        }
    }

    /// Fill `buf` from the input; returns the bytes read (fewer only at its end).
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        if let Some(p) = self.pushback.take() {
            // Only ever read back into a 4-byte buffer.
            n = p.len().min(buf.len());
            buf[..n].copy_from_slice(&p[..n]);
        }
        while n < buf.len() {
            match self.inner.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    fn exact(&mut self, buf: &mut [u8], what: &str) -> io::Result<()> {
        if self.fill(buf)? < buf.len() {
            return Err(cut(what));
        }
        Ok(())
    }

    fn u32_le(&mut self, what: &str) -> io::Result<u32> {
        let mut b = [0u8; 4];
        self.exact(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Skip `n` bytes of the input.
    fn skip(&mut self, n: u64, what: &str) -> io::Result<()> {
        let done = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
        if done < n {
            return Err(cut(what));
        }
        Ok(())
    }

    /// Read the magic number of the next frame and its header. False at the end.
    fn next_frame(&mut self) -> io::Result<bool> {
        let mut m = [0u8; 4];
        match self.fill(&mut m)? {
            0 if self.frames > 0 => return Ok(false),
            0 => return Err(cut("the first frame header")),
            4 => {}
            _ => return Err(cut("a frame header")),
        }
        let magic = u32::from_le_bytes(m);
        if SKIPPABLE.contains(&magic) {
            let len = self.u32_le("a skippable frame")?;
            self.skip(len as u64, "a skippable frame")?;
            return Ok(true);
        }
        self.frames += 1;
        self.out.clear();
        self.pos = 0;
        if magic == LEGACY_MAGIC {
            self.state = State::Legacy;
            return Ok(true);
        }
        if magic != FRAME_MAGIC {
            return Err(bad(format!(
                "not an LZ4 frame (magic number {magic:#010x}) after {} frame{}",
                self.frames - 1,
                if self.frames == 2 { "" } else { "s" }
            )));
        }
        let mut d = [0u8; 2];
        self.exact(&mut d, "a frame header")?;
        let (flg, bd) = (d[0], d[1]);
        if flg >> 6 != 1 {
            return Err(bad(format!("unsupported frame version {}", flg >> 6)));
        }
        if flg & 0b10 != 0 || bd & 0x8f != 0 {
            return Err(bad("reserved bits set in the frame header"));
        }
        let max_block = match (bd >> 4) & 7 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            b => return Err(bad(format!("invalid block size code {b}"))),
        };
        let mut desc = vec![flg, bd];
        let content_size = if flg & 0b1000 != 0 {
            let mut s = [0u8; 8];
            self.exact(&mut s, "a frame header")?;
            desc.extend_from_slice(&s);
            Some(u64::from_le_bytes(s))
        } else {
            None
        };
        if flg & 1 != 0 {
            let mut id = [0u8; 4];
            self.exact(&mut id, "a frame header")?;
            return Err(bad(format!(
                "the frame needs dictionary {:#x}, which is not in the stream",
                u32::from_le_bytes(id)
            )));
        }
        let mut hc = [0u8; 1];
        self.exact(&mut hc, "a frame header")?;
        let want = (XxHash32::oneshot(0, &desc) >> 8) as u8;
        if hc[0] != want {
            return Err(bad("frame header checksum mismatch"));
        }
        self.state = State::Frame(Frame {
            linked: flg & 0b10_0000 == 0,
            block_checksum: flg & 0b1_0000 != 0,
            content_checksum: flg & 0b100 != 0,
            content_size,
            max_block,
            hasher: XxHash32::with_seed(0),
            produced: 0,
        });
        Ok(true)
    }

    /// Decode the next block of the current frame into `out[pos..]`; false at the
    /// frame's end.
    fn frame_block(&mut self) -> io::Result<bool> {
        let State::Frame(f) = &self.state else {
            unreachable!()
        };
        let (linked, max_block, block_checksum) = (f.linked, f.max_block, f.block_checksum);
        let word = self.u32_le("a block header")?;
        if word == 0 {
            let State::Frame(f) = std::mem::replace(&mut self.state, State::Between) else {
                unreachable!()
            };
            if let Some(want) = f.content_size {
                if want != f.produced {
                    return Err(bad(format!(
                        "the frame holds {} bytes, its header says {want}",
                        f.produced
                    )));
                }
            }
            if f.content_checksum {
                let want = self.u32_le("a content checksum")?;
                if f.hasher.finish_32() != want {
                    return Err(bad("content checksum mismatch"));
                }
            }
            return Ok(false);
        }
        let stored = word & 0x8000_0000 != 0;
        let len = (word & 0x7fff_ffff) as usize;
        if len > max_block {
            return Err(bad(format!(
                "a block of {len} bytes exceeds the frame's block size ({max_block})"
            )));
        }
        self.src.resize(len, 0);
        let mut src = std::mem::take(&mut self.src);
        let r = self.exact(&mut src, "a block");
        self.src = src;
        r?;
        if block_checksum {
            let want = self.u32_le("a block checksum")?;
            if XxHash32::oneshot(0, &self.src) != want {
                return Err(bad("block checksum mismatch"));
            }
        }
        // Keep the last WINDOW bytes as the dictionary of the next linked block.
        let keep = if linked {
            self.out.len().min(WINDOW)
        } else {
            0
        };
        let drop = self.out.len() - keep;
        self.out.drain(..drop);
        let start = self.out.len();
        let n = if stored {
            self.out.extend_from_slice(&self.src);
            len
        } else {
            self.out.resize(start + max_block, 0);
            let (dict, dst) = self.out.split_at_mut(start);
            match lz4_flex::block::decompress_into_with_dict(&self.src, dst, dict) {
                Ok(n) => n,
                Err(e) => {
                    self.out.truncate(start);
                    return Err(bad(format!("corrupt block: {e}")));
                }
            }
        };
        self.out.truncate(start + n);
        self.pos = start;
        let State::Frame(f) = &mut self.state else {
            unreachable!()
        };
        f.produced += n as u64;
        if f.content_checksum {
            f.hasher.write(&self.out[start..]);
        }
        Ok(true)
    }

    /// Decode the next block of a legacy stream; false at its end.
    fn legacy_block(&mut self) -> io::Result<bool> {
        let mut w = [0u8; 4];
        match self.fill(&mut w)? {
            0 => {
                self.state = State::Done;
                return Ok(false);
            }
            4 => {}
            _ => return Err(cut("a block header")),
        }
        let word = u32::from_le_bytes(w);
        if word == FRAME_MAGIC || word == LEGACY_MAGIC || SKIPPABLE.contains(&word) {
            // Another frame follows the legacy one: its magic number is read again.
            self.state = State::Between;
            self.pushback = Some(w);
            return Ok(false);
        }
        let len = word as usize;
        if len > lz4_flex::block::get_maximum_output_size(LEGACY_BLOCK) {
            return Err(bad(format!("a legacy block of {len} bytes is too large")));
        }
        self.src.resize(len, 0);
        let mut src = std::mem::take(&mut self.src);
        let r = self.exact(&mut src, "a block");
        self.src = src;
        r?;
        self.out.clear();
        self.out.resize(LEGACY_BLOCK, 0);
        match lz4_flex::block::decompress_into(&self.src, &mut self.out) {
            Ok(n) => self.out.truncate(n),
            Err(e) => {
                self.out.clear();
                return Err(bad(format!("corrupt block: {e}")));
            }
        }
        self.pos = 0;
        Ok(true)
    }
}

impl<R: Read> Read for Lz4Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pos < self.out.len() {
                let n = buf.len().min(self.out.len() - self.pos);
                buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            match self.state {
                State::Done => return Ok(0),
                State::Between => {
                    if !self.next_frame()? {
                        self.state = State::Done;
                    }
                }
                State::Frame(_) => {
                    self.frame_block()?;
                }
                State::Legacy => {
                    self.legacy_block()?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame with the given flags around `blocks` (raw LZ4 blocks or stored).
    fn frame(
        linked: bool,
        block_sum: bool,
        content_sum: bool,
        blocks: &[(bool, Vec<u8>)],
    ) -> Vec<u8> {
        let mut out = FRAME_MAGIC.to_le_bytes().to_vec();
        let flg = 0x40
            | if linked { 0 } else { 0x20 }
            | if block_sum { 0x10 } else { 0 }
            | if content_sum { 0x04 } else { 0 };
        let bd = 0x40;
        out.extend([flg, bd, (XxHash32::oneshot(0, &[flg, bd]) >> 8) as u8]);
        let mut content = XxHash32::with_seed(0);
        for (stored, data) in blocks {
            let payload = if *stored {
                data.clone()
            } else {
                lz4_flex::block::compress(data)
            };
            let word = payload.len() as u32 | if *stored { 0x8000_0000 } else { 0 };
            out.extend(word.to_le_bytes());
            out.extend(&payload);
            if block_sum {
                out.extend(XxHash32::oneshot(0, &payload).to_le_bytes());
            }
            content.write(data);
        }
        out.extend(0u32.to_le_bytes());
        if content_sum {
            out.extend(content.finish_32().to_le_bytes());
        }
        out
    }

    fn decode(b: &[u8]) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        Lz4Decoder::new(b).read_to_end(&mut v)?;
        Ok(v)
    }

    #[test]
    fn frames_skippable_frames_and_legacy() {
        let a = b"hello hello hello hello world".repeat(50);
        let b = b"second frame".to_vec();
        let mut s = frame(false, true, true, &[(false, a.clone()), (true, b.clone())]);
        s.extend(0x184D_2A51u32.to_le_bytes());
        s.extend(3u32.to_le_bytes());
        s.extend(b"xyz");
        s.extend(frame(true, false, false, &[(false, b.clone())]));
        let mut want = a.clone();
        want.extend(&b);
        want.extend(&b);
        assert_eq!(decode(&s).unwrap(), want);
        // Cut anywhere: an error, never a short clean end.
        for cutat in [1, 5, 8, 20, s.len() - 1] {
            assert!(decode(&s[..cutat]).is_err(), "cut at {cutat}");
        }
        let mut legacy = LEGACY_MAGIC.to_le_bytes().to_vec();
        let c = lz4_flex::block::compress(&a);
        legacy.extend((c.len() as u32).to_le_bytes());
        legacy.extend(c);
        assert_eq!(decode(&legacy).unwrap(), a);
    }

    #[test]
    fn checksums_are_checked() {
        let a = b"data data data".repeat(10);
        let mut s = frame(false, true, true, &[(false, a)]);
        let n = s.len();
        s[n - 1] ^= 1;
        assert!(decode(&s).is_err());
    }
}
