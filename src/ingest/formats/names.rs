//! Member names in legacy encodings: `--name-encoding ENC`.
//!
//! Why: archives made on Russian or Japanese systems (cp866, koi8-r,
//! Shift-JIS/cp932, EUC-JP) carry names in those encodings, without anything
//! saying so. A name that is not UTF-8 cannot be stored as it is; the user, who
//! knows where the data came from, names the encoding, and names that are not
//! valid UTF-8 are decoded from it (with `encoding_rs`, the WHATWG decoders).
//! Zip names without the UTF-8 flag are CP437 by the zip standard (its
//! appendix D), which `encoding_rs` lacks: [`decode_cp437`] is here.

use encoding_rs::Encoding;

/// The encoding `label` names (WHATWG labels and a few common aliases:
/// `cp866`, `koi8-r`, `cp932`/`shift_jis`/`sjis`, `euc-jp`, `cp1251`, `latin1`,
/// …), or `cp437`. `None` for an unknown label.
pub fn parse_encoding(label: &str) -> Option<NameEncoding> {
    let l = label.trim().to_ascii_lowercase();
    match l.as_str() {
        "cp437" | "ibm437" | "437" | "dos" => return Some(NameEncoding::Cp437),
        "utf-8" | "utf8" => return Some(NameEncoding::Utf8),
        _ => {}
    }
    let alias = match l.as_str() {
        "cp932" | "sjis" | "ms932" | "windows-31j" => "shift_jis",
        "eucjp" => "euc-jp",
        "cp1251" => "windows-1251",
        "cp1252" => "windows-1252",
        "latin1" | "latin-1" => "iso-8859-1",
        "cp936" => "gbk",
        "cp949" => "euc-kr",
        "cp950" | "big-5" => "big5",
        other => other,
    };
    Encoding::for_label(alias.as_bytes()).map(NameEncoding::Whatwg)
}

/// An encoding of member names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameEncoding {
    /// UTF-8 (a name that is not valid UTF-8 does not decode).
    Utf8,
    /// IBM code page 437, the zip format's default for names without the UTF-8 flag.
    Cp437,
    /// Any other encoding the WHATWG Encoding Standard names (`shift_jis`, `gbk`, …).
    Whatwg(&'static Encoding),
}

impl NameEncoding {
    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            NameEncoding::Utf8 => "UTF-8",
            NameEncoding::Cp437 => "CP437",
            NameEncoding::Whatwg(e) => e.name(),
        }
    }

    /// `raw` decoded, or `None` when it is not valid in this encoding.
    pub fn decode(self, raw: &[u8]) -> Option<String> {
        match self {
            NameEncoding::Utf8 => std::str::from_utf8(raw).ok().map(str::to_string),
            NameEncoding::Cp437 => Some(decode_cp437(raw)),
            NameEncoding::Whatwg(e) => e
                .decode_without_bom_handling_and_without_replacement(raw)
                .map(|c| c.into_owned()),
        }
    }
}

/// The end of the message for a name that is not UTF-8.
pub const HINT: &str = "if the archive was made on a system with another encoding of names, \
                        --name-encoding ENC decodes them (e.g. cp866, koi8-r, cp1251, \
                        shift_jis, euc-jp, cp437)";

/// A member name as text: UTF-8 when it is, else decoded from `enc` (when
/// given). `Err` with the detail of the problem otherwise.
pub fn decode_name(raw: &[u8], enc: Option<NameEncoding>) -> Result<String, String> {
    if let Ok(s) = std::str::from_utf8(raw) {
        return Ok(s.to_string());
    }
    match enc {
        Some(e) => e.decode(raw).ok_or_else(|| {
            format!(
                "member name is neither UTF-8 nor valid {} (--name-encoding); skipped",
                e.name()
            )
        }),
        None => Err(NOT_UTF8.into()),
    }
}

/// The problem of a member whose name is not UTF-8 (no encoding given).
pub const NOT_UTF8: &str = "member name is not valid UTF-8; skipped";

/// The note after an import that met `count` names that are not UTF-8.
pub fn hint(count: u64) -> String {
    format!(
        "{count} member name{} not valid UTF-8: {HINT}",
        if count == 1 { " is" } else { "s are" }
    )
}

/// CP437, the original IBM PC character set, as the zip standard maps it.
pub fn decode_cp437(raw: &[u8]) -> String {
    raw.iter()
        .map(|&b| {
            if b < 0x80 {
                b as char
            } else {
                CP437_HIGH[(b - 0x80) as usize]
            }
        })
        .collect()
}

const CP437_HIGH: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å', 'É', 'æ', 'Æ',
    'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', '¢', '£', '¥', '₧', 'ƒ', 'á', 'í', 'ó', 'ú', 'ñ', 'Ñ',
    'ª', 'º', '¿', '⌐', '¬', '½', '¼', '¡', '«', '»', '░', '▒', '▓', '│', '┤', '╡', '╢', '╖', '╕',
    '╣', '║', '╗', '╝', '╜', '╛', '┐', '└', '┴', '┬', '├', '─', '┼', '╞', '╟', '╚', '╔', '╩', '╦',
    '╠', '═', '╬', '╧', '╨', '╤', '╥', '╙', '╘', '╒', '╓', '╫', '╪', '┘', '┌', '█', '▄', '▌', '▐',
    '▀', 'α', 'ß', 'Γ', 'π', 'Σ', 'σ', 'µ', 'τ', 'Φ', 'Θ', 'Ω', 'δ', '∞', 'φ', 'ε', '∩', '≡', '±',
    '≥', '≤', '⌠', '⌡', '÷', '≈', '°', '∙', '·', '√', 'ⁿ', '²', '■', '\u{a0}',
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_names() {
        let cp866 = parse_encoding("cp866").unwrap();
        assert_eq!(cp866.decode(&[0x8f, 0xe0, 0xa8]).unwrap(), "При");
        let koi = parse_encoding("KOI8-R").unwrap();
        assert_eq!(koi.decode(&[0xf0, 0xd2, 0xc9]).unwrap(), "При");
        let sjis = parse_encoding("cp932").unwrap();
        assert_eq!(sjis.decode(&[0x93, 0xfa, 0x96, 0x7b]).unwrap(), "日本");
        let euc = parse_encoding("euc-jp").unwrap();
        assert_eq!(euc.decode(&[0xc6, 0xfc, 0xcb, 0xdc]).unwrap(), "日本");
        assert_eq!(decode_cp437(&[0x80, b'a', 0xe1, 0xff]), "Çaß\u{a0}");
        assert!(parse_encoding("nonsense").is_none());
        assert_eq!(decode_name(&[0xff, 0xfe], None).unwrap_err(), NOT_UTF8);
        assert!(hint(2).contains("--name-encoding"));
        assert_eq!(decode_name("ü".as_bytes(), Some(cp866)).unwrap(), "ü");
    }
}
