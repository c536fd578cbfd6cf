//! `compress` (`.Z`, `.taZ`) streams: the LZW coding of Unix `compress` and
//! `ncompress`, decoded as it streams in.
//!
//! Why our own: no maintained Rust crate reads this container. `weezl` decodes
//! the LZW of GIF and TIFF, whose code-width changes and clear codes differ from
//! `compress`'s (which pads its output to a group of eight codes at every clear
//! code). The algorithm below is the one of libarchive (bsdtar's reader, so a
//! stream bsdtar reads is read the same way): a header of `1f 9d` and a flags
//! byte (maximum code width 9–16 bits, bit 7: block mode, where code 256 clears
//! the table), then codes packed least significant bit first, starting 9 bits
//! wide and growing by one bit each time the table fills a width.

use std::io::{self, Read};

/// The two magic bytes of a `compress` stream.
pub const MAGIC: [u8; 2] = [0x1f, 0x9d];

fn bad(detail: impl Into<String>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("compress (.Z): {}", detail.into()),
    )
}

/// A reader of the decompressed bytes of a `compress` stream.
pub struct LzwDecoder<R> {
    inner: R,
    inbuf: Box<[u8]>,
    in_pos: usize,
    in_len: usize,
    eof: bool,
    started: bool,
    bit_buffer: u32,
    bits_avail: u32,
    bytes_in_section: u32,
    bits: u32,
    max_bits: u32,
    /// One past the largest code of the table (`1 << max_bits`).
    max_code: u32,
    section_end_code: u32,
    free_ent: u32,
    old_code: Option<u32>,
    fin_byte: u8,
    block_mode: bool,
    prefix: Vec<u16>,
    suffix: Vec<u8>,
    /// Output of the current code, in reverse order.
    stack: Vec<u8>,
    done: bool,
}

impl<R: Read> LzwDecoder<R> {
    /// Decode the `compress` (`.Z`) stream `inner`.
    pub fn new(inner: R) -> LzwDecoder<R> {
        LzwDecoder {
            inner,
            inbuf: vec![0u8; 64 << 10].into_boxed_slice(),
            in_pos: 0,
            in_len: 0,
            eof: false,
            started: false,
            bit_buffer: 0,
            bits_avail: 0,
            bytes_in_section: 0,
            bits: 9,
            max_bits: 16,
            max_code: 1 << 16,
            section_end_code: 511,
            free_ent: 256,
            old_code: None,
            fin_byte: 0,
            block_mode: true,
            prefix: vec![0; 1 << 16],
            suffix: (0..1u32 << 16).map(|c| c as u8).collect(),
            stack: Vec::with_capacity(1 << 16),
            done: false,
        }
    }

    /// The next input byte, `None` at the end.
    fn byte(&mut self) -> io::Result<Option<u8>> {
        if self.in_pos == self.in_len {
            if self.eof {
                return Ok(None);
            }
            loop {
                match self.inner.read(&mut self.inbuf) {
                    Ok(0) => {
                        self.eof = true;
                        return Ok(None);
                    }
                    Ok(n) => {
                        self.in_pos = 0;
                        self.in_len = n;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let b = self.inbuf[self.in_pos];
        self.in_pos += 1;
        Ok(Some(b))
    }

    /// The next `n`-bit code, `None` at the end of the input.
    fn get_bits(&mut self, n: u32) -> io::Result<Option<u32>> {
        while self.bits_avail < n {
            let Some(b) = self.byte()? else {
                return Ok(None);
            };
            self.bit_buffer |= (b as u32) << self.bits_avail;
            self.bits_avail += 8;
            self.bytes_in_section += 1;
        }
        let code = self.bit_buffer & ((1u32 << n) - 1);
        self.bit_buffer >>= n;
        self.bits_avail -= n;
        Ok(Some(code))
    }

    fn header(&mut self) -> io::Result<()> {
        let mut h = [0u8; 3];
        for b in h.iter_mut() {
            *b = self
                .byte()?
                .ok_or_else(|| bad("the stream ends inside its header"))?;
        }
        if h[..2] != MAGIC {
            return Err(bad("not a compress stream"));
        }
        self.max_bits = (h[2] & 0x1f) as u32;
        if !(9..=16).contains(&self.max_bits) {
            return Err(bad(format!(
                "invalid maximum code width {} (9 to 16 bits)",
                self.max_bits
            )));
        }
        self.max_code = 1 << self.max_bits;
        self.block_mode = h[2] & 0x80 != 0;
        self.free_ent = if self.block_mode { 257 } else { 256 };
        self.bits = 9;
        self.section_end_code = self.section_end();
        Ok(())
    }

    /// The largest code of the current width before it grows: at the largest
    /// width, the table's end (it never grows past it; `compress -b9` streams stay
    /// 9 bits wide, as `compress -d` reads them).
    fn section_end(&self) -> u32 {
        if self.bits >= self.max_bits {
            self.max_code
        } else {
            (1 << self.bits) - 1
        }
    }

    /// Decode the next code onto the stack; false at the end of the input.
    fn next_code(&mut self) -> io::Result<bool> {
        loop {
            let Some(code) = self.get_bits(self.bits)? else {
                return Ok(false);
            };
            if code == 256 && self.block_mode {
                // `compress` wrote its codes in groups of eight (as many bytes as
                // bits per code); the rest of the group after a clear code is
                // padding.
                let skip = (self.bits - self.bytes_in_section % self.bits) % self.bits;
                self.bits_avail = 0;
                self.bit_buffer = 0;
                for _ in 0..skip {
                    if self.get_bits(8)?.is_none() {
                        return Ok(false);
                    }
                }
                self.bytes_in_section = 0;
                self.bits = 9;
                self.section_end_code = self.section_end();
                self.free_ent = 257;
                self.old_code = None;
                continue;
            }
            let new_code = code;
            let mut code = code;
            if code > self.free_ent || (code == self.free_ent && self.old_code.is_none()) {
                return Err(bad("corrupt data (invalid code)"));
            }
            if code >= self.free_ent {
                // The code being defined: the previous string and its first byte.
                self.stack.push(self.fin_byte);
                code = self.old_code.unwrap_or(0);
            }
            while code >= 256 {
                self.stack.push(self.suffix[code as usize]);
                code = self.prefix[code as usize] as u32;
            }
            self.fin_byte = code as u8;
            self.stack.push(self.fin_byte);
            let slot = self.free_ent;
            if let Some(old) = self.old_code {
                if slot < self.max_code {
                    self.prefix[slot as usize] = old as u16;
                    self.suffix[slot as usize] = self.fin_byte;
                    self.free_ent += 1;
                }
            }
            if self.free_ent > self.section_end_code {
                self.bits += 1;
                self.bytes_in_section = 0;
                self.section_end_code = self.section_end();
            }
            self.old_code = Some(new_code);
            return Ok(true);
        }
    }
}

impl<R: Read> Read for LzwDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.started {
            self.started = true;
            self.header()?;
        }
        let mut n = 0;
        while n < buf.len() {
            if !self.stack.is_empty() {
                // The stack holds the string backwards: hand out its end first.
                let k = self.stack.len().min(buf.len() - n);
                let from = self.stack.len() - k;
                for (d, &b) in buf[n..n + k]
                    .iter_mut()
                    .zip(self.stack[from..].iter().rev())
                {
                    *d = b;
                }
                self.stack.truncate(from);
                n += k;
                continue;
            }
            if self.done {
                break;
            }
            if !self.next_code()? {
                self.done = true;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_headers() {
        let mut v = Vec::new();
        assert!(LzwDecoder::new(&[0x1f, 0x9d, 0x88][..])
            .read_to_end(&mut v)
            .is_err());
        assert!(LzwDecoder::new(&[0x1f, 0x9d][..])
            .read_to_end(&mut v)
            .is_err());
    }

    #[test]
    fn decodes_literal_codes() {
        // Codes 'a' 'b' 'c' at 9 bits, packed LSB first, block mode, 16 bits.
        let codes = [b'a' as u32, b'b' as u32, 257, b'c' as u32];
        let mut body = Vec::new();
        let (mut acc, mut n) = (0u64, 0u32);
        for c in codes {
            acc |= (c as u64) << n;
            n += 9;
            while n >= 8 {
                body.push(acc as u8);
                acc >>= 8;
                n -= 8;
            }
        }
        if n > 0 {
            body.push(acc as u8);
        }
        let mut s = vec![0x1f, 0x9d, 0x90];
        s.extend(body);
        let mut v = Vec::new();
        LzwDecoder::new(&s[..]).read_to_end(&mut v).unwrap();
        assert_eq!(v, b"ababc");
    }
}
