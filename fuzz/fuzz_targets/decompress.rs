//! The decoders of compressed tar streams on arbitrary bytes: content detection
//! (skippable frames included), the lz4 frame and legacy decoder, the `compress`
//! (LZW) decoder, gzip member by member, and the names of legacy encodings. The
//! first byte chooses; any error is fine, a panic, a hang or unbounded memory is
//! a finding. Mode 5 builds LZ4 frames with `lz4_flex`'s encoder (block size,
//! linked blocks and checksums from the input) and decodes them: the bytes must
//! come back unchanged.
#![no_main]

use std::io::{Read, Write};

use barecat::ingest::decompress::{self, gzip::GzipDecoder, lz4::Lz4Decoder, lzw::LzwDecoder};
use barecat::ingest::formats::{self, names};
use libfuzzer_sys::fuzz_target;

/// Read at most this much decompressed output.
const CAP: u64 = 16 << 20;

fn drain(r: impl Read) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    r.take(CAP).read_to_end(&mut out).ok().map(|_| out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 6 {
        0 => {
            if let Ok((_, r)) = decompress::open(rest) {
                drain(r);
            }
        }
        1 => {
            drain(Lz4Decoder::new(rest));
        }
        2 => {
            let mut z = decompress::lzw::MAGIC.to_vec();
            z.extend_from_slice(rest);
            drain(LzwDecoder::new(&z[..]));
        }
        3 => {
            let mut z = vec![0x1f, 0x8b];
            z.extend_from_slice(rest);
            drain(GzipDecoder::new(&z[..], decompress::Notes::default()));
        }
        4 => {
            for label in ["cp866", "koi8-r", "shift_jis", "euc-jp", "cp437", "utf-8"] {
                let enc = names::parse_encoding(label).unwrap();
                let _ = names::decode_name(rest, Some(enc));
            }
            let _ = names::decode_cp437(rest);
            let _ = formats::detect_head(rest);
        }
        _ => {
            let Some((&cfg, content)) = rest.split_first() else {
                return;
            };
            use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
            let block = [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max1MB, BlockSize::Max4MB]
                [(cfg & 3) as usize];
            let info = FrameInfo::new()
                .block_size(block)
                .block_mode(if cfg & 4 != 0 { BlockMode::Linked } else { BlockMode::Independent })
                .block_checksums(cfg & 8 != 0)
                .content_checksum(cfg & 16 != 0);
            let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(content).unwrap();
            let mut frame = enc.finish().unwrap();
            if cfg & 32 != 0 {
                // Two frames back to back, with a skippable frame between them.
                let copy = frame.clone();
                frame.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
                frame.extend_from_slice(&2u32.to_le_bytes());
                frame.extend_from_slice(b"zz");
                frame.extend_from_slice(&copy);
                let got = drain(Lz4Decoder::new(&frame[..])).expect("valid frames decode");
                assert_eq!(got.len(), content.len() * 2);
                assert_eq!(&got[..content.len()], content);
                assert_eq!(&got[content.len()..], content);
            } else {
                let got = drain(Lz4Decoder::new(&frame[..])).expect("a valid frame decodes");
                assert_eq!(got, content);
            }
        }
    }
});
