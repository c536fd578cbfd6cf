//! Human sizes: parsing `10G`, `1.5G`, `500M`, `64KiB`, and printing `1.5K`.
//!
//! Units are binary (K = 1024), as in Python barecat and GNU tools. A trailing `B`
//! or `iB` is accepted (`10GB`, `10GiB`), letters in either case.

use crate::core::error::{Error, Result};

/// Parse a size such as `10G`, `1.5G`, `500m`, `4096`, `64KiB`.
pub fn parse_size(text: &str) -> Result<u64> {
    let bad = || Error::InvalidSize(text.to_string());
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let mut num = upper.as_str();
    for suffix in ["IB", "B"] {
        if let Some(rest) = num.strip_suffix(suffix) {
            num = rest;
            break;
        }
    }
    let (num, mult) = match num.chars().last() {
        Some(c @ ('K' | 'M' | 'G' | 'T' | 'P' | 'E')) => {
            let power = "KMGTPE".find(c).unwrap_or(0) as u32 + 1;
            (&num[..num.len() - 1], 1u128 << (10 * power))
        }
        _ => (num, 1u128),
    };
    let num = num.trim();
    if num.is_empty() || num.starts_with(['-', '+']) {
        return Err(bad());
    }
    let value: u128 = if let Ok(n) = num.parse::<u64>() {
        (n as u128).checked_mul(mult).ok_or_else(bad)?
    } else {
        let f: f64 = num.parse().map_err(|_| bad())?;
        if !f.is_finite() || f < 0.0 {
            return Err(bad());
        }
        (f * mult as f64).round() as u128
    };
    u64::try_from(value).map_err(|_| bad())
}

/// Python barecat's verify/defrag format: below 1024 an integer, else one decimal
/// and K, M, G, T or P (no `B`, no space): `1013`, `1.5K`, `1.0M`.
pub fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return bytes.to_string();
    }
    let mut v = bytes as f64;
    for unit in ["K", "M", "G", "T"] {
        v /= 1024.0;
        if v < 1024.0 {
            return format!("{v:.1}{unit}");
        }
    }
    format!("{:.1}P", v / 1024.0)
}

/// Signed variant of [`human`] for values that can be negative in a corrupt index.
pub fn human_signed(bytes: i64) -> String {
    if bytes < 0 {
        format!("-{}", human(bytes.unsigned_abs()))
    } else {
        human(bytes as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("10G").unwrap(), 10 << 30);
        assert_eq!(parse_size("10g").unwrap(), 10 << 30);
        assert_eq!(parse_size("500M").unwrap(), 500 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_size("64KB").unwrap(), 64 << 10);
        assert_eq!(parse_size("2T").unwrap(), 2 << 40);
        assert_eq!(parse_size("7B").unwrap(), 7);
        for bad in [
            "",
            "G",
            "-1",
            "1X",
            "abc",
            "1e400",
            "99999999999E",
            "1.2.3K",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_like_python() {
        assert_eq!(human(0), "0");
        assert_eq!(human(1013), "1013");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(1 << 20), "1.0M");
        assert_eq!(human(5 << 30), "5.0G");
        assert_eq!(human(3 << 50), "3.0P");
    }
}
