//! Times as `touch -d` takes them (`@SECONDS[.FRACTION]`, or a local date and
//! time), and the metadata of the empty files `touch` creates.

use crate::core::entry::{Meta, S_IFREG};
use crate::core::error::{Error, Result};

/// Parse a DATE into nanoseconds since the epoch: `@SECONDS[.FRACTION]` since the
/// epoch, or `YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]]` in local time (`T` may separate
/// the date and the time).
pub fn parse_date(s: &str) -> Result<i64> {
    let bad = || Error::InvalidDate(s.to_string());
    let frac_ns = |f: &str| -> Result<i64> {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        Ok(f.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - f.len() as u32))
    };
    if let Some(rest) = s.strip_prefix('@') {
        let (secs, frac) = rest.split_once('.').unwrap_or((rest, ""));
        let secs: i64 = secs.parse().map_err(|_| bad())?;
        let ns = if frac.is_empty() { 0 } else { frac_ns(frac)? };
        let ns = if secs < 0 { -ns } else { ns };
        return secs
            .checked_mul(1_000_000_000)
            .and_then(|v| v.checked_add(ns))
            .ok_or_else(bad);
    }
    let (date, time) = s
        .split_once(['T', ' '])
        .map_or((s, None), |(d, t)| (d, Some(t)));
    let num = |t: &str, lo: i64, hi: i64| -> Result<i64> {
        match t.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) && t.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
            _ => Err(bad()),
        }
    };
    let d: Vec<&str> = date.split('-').collect();
    let [y, mo, da] = d[..] else {
        return Err(bad());
    };
    let (y, mo, da) = (num(y, 1, 9999)?, num(mo, 1, 12)?, num(da, 1, 31)?);
    let (mut h, mut mi, mut se, mut ns) = (0, 0, 0, 0);
    if let Some(t) = time {
        let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
        let parts: Vec<&str> = hms.split(':').collect();
        match parts[..] {
            [a, b] => (h, mi) = (num(a, 0, 23)?, num(b, 0, 59)?),
            [a, b, c] => (h, mi, se) = (num(a, 0, 23)?, num(b, 0, 59)?, num(c, 0, 60)?),
            _ => return Err(bad()),
        }
        if !frac.is_empty() {
            ns = frac_ns(frac)?;
        }
    }
    // SAFETY: a zeroed tm is a valid value; mktime reads and normalizes it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (y - 1900) as i32;
    tm.tm_mon = (mo - 1) as i32;
    tm.tm_mday = da as i32;
    tm.tm_hour = h as i32;
    tm.tm_min = mi as i32;
    tm.tm_sec = se as i32;
    tm.tm_isdst = -1;
    // SAFETY: tm is a valid, initialized struct.
    let secs = unsafe { libc::mktime(&mut tm) };
    if secs == -1 && !(y == 1969 && mo == 12 && da == 31) {
        return Err(bad());
    }
    Ok(secs as i64 * 1_000_000_000 + ns)
}

/// The metadata of an empty file that `touch` creates: mode 0666 less the umask,
/// the caller's user and group, and the given mtime.
pub fn new_file_meta(mtime_ns: i64) -> Meta {
    // SAFETY: umask only reads and sets the process's file mode mask (restored at
    // once); getuid and getgid cannot fail.
    let (mask, uid, gid) = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        (m as u32, libc::getuid(), libc::getgid())
    };
    Meta {
        mode: Some(S_IFREG | (0o666 & !mask)),
        uid: Some(uid),
        gid: Some(gid),
        mtime_ns: Some(mtime_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("@0").unwrap(), 0);
        assert_eq!(
            parse_date("@1700000000.5").unwrap(),
            1_700_000_000_500_000_000
        );
        assert_eq!(parse_date("@-1.5").unwrap(), -1_500_000_000);
        assert!(parse_date("@x").is_err());
        assert!(parse_date("2024-13-01").is_err());
        assert!(parse_date("2024-01-01 25:00").is_err());
        assert!(parse_date("yesterday").is_err());
        let a = parse_date("2024-01-31").unwrap();
        let b = parse_date("2024-01-31T12:30:15.25").unwrap();
        assert_eq!(
            b - a,
            (12 * 3600 + 30 * 60 + 15) * 1_000_000_000 + 250_000_000
        );
    }

    #[test]
    fn bad_dates_name_themselves() {
        assert_eq!(
            parse_date("yesterday").unwrap_err().to_string(),
            "\"yesterday\" is not a date (@SECONDS, or YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]])"
        );
    }

    #[test]
    fn new_files_are_regular_and_ours() {
        let m = new_file_meta(5);
        assert_eq!(m.mtime_ns, Some(5));
        assert_eq!(m.mode.unwrap() & S_IFREG, S_IFREG);
        assert_eq!(m.mode.unwrap() & 0o111, 0);
    }
}
