//! Line formats shared by the listing commands: `ls -l`-style long lines, times,
//! owner names and JSON lines, in our own flavour (`barecat ls`) and in Python
//! barecat's (`barecat list`, docs/FORMAT.md §8.4), which scripts parse.

use std::collections::HashMap;
use std::ffi::CStr;
use std::fmt::Write as _;

use serde::Serialize;

use crate::core::entry::{Entry, S_IFDIR, S_IFLNK, S_IFMT};
use crate::maint::ncdu::json_ascii;

/// `ls -l`-style mode string. Directories always show `d` (tar imports store
/// permission bits without type bits); a NULL mode shows as `?`.
pub fn mode_string(mode: Option<u32>, is_dir: bool) -> String {
    let kind = if is_dir || mode.is_some_and(|m| m & S_IFMT == S_IFDIR) {
        'd'
    } else if mode.is_some_and(|m| m & S_IFMT == S_IFLNK) {
        'l'
    } else {
        '-'
    };
    let Some(m) = mode else {
        return format!("{kind}?????????");
    };
    let mut s = String::with_capacity(10);
    s.push(kind);
    let bit = |mask: u32, c: char| if m & mask != 0 { c } else { '-' };
    let special = |x: bool, special: bool, lower: char, upper: char| match (x, special) {
        (true, true) => lower,
        (false, true) => upper,
        (true, false) => 'x',
        (false, false) => '-',
    };
    s.push(bit(0o400, 'r'));
    s.push(bit(0o200, 'w'));
    s.push(special(m & 0o100 != 0, m & 0o4000 != 0, 's', 'S'));
    s.push(bit(0o040, 'r'));
    s.push(bit(0o020, 'w'));
    s.push(special(m & 0o010 != 0, m & 0o2000 != 0, 's', 'S'));
    s.push(bit(0o004, 'r'));
    s.push(bit(0o002, 'w'));
    s.push(special(m & 0o001 != 0, m & 0o1000 != 0, 't', 'T'));
    s
}

/// Python barecat's mode string: the type character from the stored type bits only
/// (`d`, `l`, else `-`: a directory imported from tar, whose mode has no type bits,
/// shows `-`), then the nine `rwx` bits (no setuid, setgid or sticky letters);
/// `----------` for NULL.
pub fn py_mode_string(mode: Option<u32>) -> String {
    let Some(m) = mode else {
        return "----------".into();
    };
    let mut s = String::with_capacity(10);
    s.push(match m & S_IFMT {
        S_IFDIR => 'd',
        S_IFLNK => 'l',
        _ => '-',
    });
    for (mask, c) in [
        (0o400, 'r'),
        (0o200, 'w'),
        (0o100, 'x'),
        (0o040, 'r'),
        (0o020, 'w'),
        (0o010, 'x'),
        (0o004, 'r'),
        (0o002, 'w'),
        (0o001, 'x'),
    ] {
        s.push(if m & mask != 0 { c } else { '-' });
    }
    s
}

/// Looks up user and group names, remembering the answers (one table for users and
/// one for groups: Python barecat keeps both in one table keyed by the number, so
/// that a group whose number equals an earlier user's shows that user's name; we do
/// not copy that).
#[derive(Default)]
pub struct Names {
    users: HashMap<u32, String>,
    groups: HashMap<u32, String>,
}

impl Names {
    /// The user name for `uid`, or the number when unknown, or `-` for NULL.
    pub fn user(&mut self, uid: Option<u32>) -> String {
        let Some(uid) = uid else { return "-".into() };
        self.users
            .entry(uid)
            .or_insert_with(|| lookup_user(uid).unwrap_or_else(|| uid.to_string()))
            .clone()
    }

    /// The group name for `gid`, or the number when unknown, or `-` for NULL.
    pub fn group(&mut self, gid: Option<u32>) -> String {
        let Some(gid) = gid else { return "-".into() };
        self.groups
            .entry(gid)
            .or_insert_with(|| lookup_group(gid).unwrap_or_else(|| gid.to_string()))
            .clone()
    }
}

fn lookup_user(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into the buffers we own; the name points into `buf`.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    Some(
        unsafe { CStr::from_ptr(pwd.pw_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

fn lookup_group(gid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::group = std::ptr::null_mut();
    // SAFETY: as above, for getgrgid_r.
    let rc = unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || grp.gr_name.is_null() {
        return None;
    }
    Some(
        unsafe { CStr::from_ptr(grp.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn local_tm(secs: i64) -> Option<libc::tm> {
    let t = secs as libc::time_t;
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r only writes the struct we pass.
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    (!r.is_null()).then_some(tm)
}

/// `ls -l` time: `Mon DD HH:MM` in the current year, `Mon DD  YYYY` otherwise,
/// 12 spaces when unknown.
pub fn format_time(mtime_ns: Option<i64>) -> String {
    let Some(ns) = mtime_ns else {
        return " ".repeat(12);
    };
    let now_year = local_tm(crate::core::index::now_ns() / 1_000_000_000).map(|t| t.tm_year);
    match local_tm(ns.div_euclid(1_000_000_000)) {
        Some(tm) => {
            let mon = MONTHS[tm.tm_mon.clamp(0, 11) as usize];
            if Some(tm.tm_year) == now_year {
                format!("{mon} {:>2} {:02}:{:02}", tm.tm_mday, tm.tm_hour, tm.tm_min)
            } else {
                format!("{mon} {:>2}  {}", tm.tm_mday, tm.tm_year + 1900)
            }
        }
        None => " ".repeat(12),
    }
}

/// The whole seconds Python's `datetime.fromtimestamp(mtime_ns / 1e9)` works with:
/// the nanoseconds go through a float division, and the fraction is rounded to
/// microseconds half-to-even (which can carry into the next second).
fn py_seconds(ns: i64) -> Option<i64> {
    let d = ns as f64 / 1e9;
    if !d.is_finite() {
        return None;
    }
    let (mut sec, frac) = (d.trunc(), d.fract());
    let us = (frac * 1e6).round_ties_even();
    if us >= 1e6 {
        sec += 1.0;
    } else if us < 0.0 {
        sec -= 1.0;
    }
    (sec.abs() < 1e15).then_some(sec as i64)
}

fn strftime(fmt: &CStr, tm: &libc::tm) -> String {
    let mut buf = [0u8; 128];
    // SAFETY: strftime writes at most `buf.len()` bytes, NUL included, and returns
    // the length written (0 when it did not fit).
    let n = unsafe {
        libc::strftime(
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
            fmt.as_ptr(),
            tm,
        )
    };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Python barecat's `ls -l` time: local time `strftime("%b %d %H:%M")` in the
/// current year, `"%b %d  %Y"` otherwise (zero-padded day; the month name follows
/// the `LC_TIME` locale once the program has called `setlocale`); 12 spaces when
/// unknown.
pub fn py_time(mtime_ns: Option<i64>) -> String {
    let Some(tm) = mtime_ns.and_then(py_seconds).and_then(local_tm) else {
        return " ".repeat(12);
    };
    let now_year =
        local_tm(crate::core::index::now_ns().div_euclid(1_000_000_000)).map(|t| t.tm_year);
    if Some(tm.tm_year) == now_year {
        strftime(c"%b %d %H:%M", &tm)
    } else {
        strftime(c"%b %d  %Y", &tm)
    }
}

/// Which long format: ours (`barecat ls -l`) or Python barecat's (`barecat list -l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `barecat ls -l`: ours.
    Ours,
    /// `barecat list -l`: Python barecat's, line for line.
    Python,
}

/// One line of the long format for `entry`, shown as `name`:
/// `MODE NLINK USER GROUP SIZE TIME NAME`, with the link count 1 for files and
/// subdirectories + 2 for directories, and a directory's size the total below it.
pub fn long_line(names: &mut Names, entry: &Entry, name: &str, flavor: Flavor) -> String {
    let meta = entry.meta();
    let nlink = match entry {
        Entry::File(_) => 1,
        Entry::Dir(d) => d.num_subdirs + 2,
    };
    let (mode, time) = match flavor {
        Flavor::Ours => (
            mode_string(meta.mode, entry.is_dir()),
            format_time(meta.mtime_ns),
        ),
        Flavor::Python => (py_mode_string(meta.mode), py_time(meta.mtime_ns)),
    };
    format!(
        "{} {:>4} {:<8} {:<8} {:>8} {} {}",
        mode,
        nlink,
        names.user(meta.uid),
        names.group(meta.gid),
        match entry {
            Entry::File(f) => f.size as i64,
            Entry::Dir(d) => d.size_tree,
        },
        time,
        name
    )
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum JsonEntry<'a> {
    File {
        path: &'a str,
        size: u64,
        mtime_ns: Option<i64>,
        crc32c: Option<u32>,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        shard: u64,
        offset: u64,
    },
    Dir {
        path: &'a str,
        size_tree: i64,
        num_files_tree: i64,
        num_files: i64,
        num_subdirs: i64,
        mtime_ns: Option<i64>,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
    },
}

/// One JSON object (one line) describing `entry`, with every column (our `--json`).
pub fn json_line(entry: &Entry) -> String {
    let j = match entry {
        Entry::File(f) => JsonEntry::File {
            path: &f.path,
            size: f.size,
            mtime_ns: f.meta.mtime_ns,
            crc32c: f.crc32c,
            mode: f.meta.mode,
            uid: f.meta.uid,
            gid: f.meta.gid,
            shard: f.shard,
            offset: f.offset,
        },
        Entry::Dir(d) => JsonEntry::Dir {
            path: &d.path,
            size_tree: d.size_tree,
            num_files_tree: d.num_files_tree,
            num_files: d.num_files,
            num_subdirs: d.num_subdirs,
            mtime_ns: d.meta.mtime_ns,
            mode: d.meta.mode,
            uid: d.meta.uid,
            gid: d.meta.gid,
        },
    };
    serde_json::to_string(&j).unwrap_or_default()
}

/// One JSON line as Python barecat's `--jsonl` writes it (`json.dumps`): keys in its
/// order, `", "` and `": "` separators, non-ASCII escaped, `null` for NULL. Files:
/// type, path, size, mtime_ns, crc32c, mode, uid, gid; directories: type, path,
/// size_tree, num_files_tree, mtime_ns, mode, uid, gid.
pub fn py_json_line(entry: &Entry) -> String {
    fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
        v.map_or_else(|| "null".to_string(), |v| v.to_string())
    }
    let mut s = String::with_capacity(160);
    match entry {
        Entry::File(f) => {
            let _ = write!(
                s,
                "{{\"type\": \"file\", \"path\": {}, \"size\": {}, \"mtime_ns\": {}, \
                 \"crc32c\": {}, \"mode\": {}, \"uid\": {}, \"gid\": {}}}",
                json_ascii(&f.path),
                f.size,
                opt(f.meta.mtime_ns),
                opt(f.crc32c),
                opt(f.meta.mode),
                opt(f.meta.uid),
                opt(f.meta.gid)
            );
        }
        Entry::Dir(d) => {
            let _ = write!(
                s,
                "{{\"type\": \"dir\", \"path\": {}, \"size_tree\": {}, \"num_files_tree\": {}, \
                 \"mtime_ns\": {}, \"mode\": {}, \"uid\": {}, \"gid\": {}}}",
                json_ascii(&d.path),
                d.size_tree,
                d.num_files_tree,
                opt(d.meta.mtime_ns),
                opt(d.meta.mode),
                opt(d.meta.uid),
                opt(d.meta.gid)
            );
        }
    }
    s
}

/// Make `strftime` follow the `LC_TIME` locale of the environment, as Python
/// barecat's `ls -l` does (call once, before any thread starts).
pub fn use_time_locale() {
    // SAFETY: setlocale with an empty string only reads the environment; called
    // before threads that could use the locale exist.
    unsafe {
        libc::setlocale(libc::LC_TIME, c"".as_ptr());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        assert_eq!(mode_string(Some(0o100644), false), "-rw-r--r--");
        assert_eq!(mode_string(Some(0o40755), true), "drwxr-xr-x");
        assert_eq!(mode_string(Some(0o755), true), "drwxr-xr-x");
        assert_eq!(mode_string(Some(0o4755), false), "-rwsr-xr-x");
        assert_eq!(mode_string(Some(0o1777), true), "drwxrwxrwt");
        assert_eq!(mode_string(Some(0o2644), false), "-rw-r-Sr--");
        assert_eq!(mode_string(None, false), "-?????????");
        assert_eq!(mode_string(Some(0o120777), false), "lrwxrwxrwx");
    }

    #[test]
    fn python_modes() {
        assert_eq!(py_mode_string(Some(0o100644)), "-rw-r--r--");
        assert_eq!(py_mode_string(Some(0o40755)), "drwxr-xr-x");
        assert_eq!(py_mode_string(Some(0o755)), "-rwxr-xr-x");
        assert_eq!(py_mode_string(Some(0o4755)), "-rwxr-xr-x");
        assert_eq!(py_mode_string(None), "----------");
        assert_eq!(py_mode_string(Some(0o120777)), "lrwxrwxrwx");
    }

    #[test]
    fn times() {
        assert_eq!(format_time(None).len(), 12);
        assert_eq!(format_time(Some(0)).len(), 12);
        assert_eq!(py_time(None), " ".repeat(12));
        assert_eq!(py_time(Some(0)).len(), 12);
    }

    #[test]
    fn python_seconds_round_like_datetime() {
        assert_eq!(py_seconds(1_500_000_000_000_000_000), Some(1_500_000_000));
        // 0.9999996 s rounds up to the next second at microsecond precision.
        assert_eq!(py_seconds(59_999_999_600), Some(60));
        assert_eq!(py_seconds(59_999_999_400), Some(59));
        assert_eq!(py_seconds(-1), Some(0));
        assert_eq!(py_seconds(-1_000_000), Some(-1));
    }

    #[test]
    fn python_json() {
        let f = crate::core::entry::FileInfo {
            path: "d/\u{e9}.txt".into(),
            shard: 0,
            offset: 0,
            size: 3,
            crc32c: None,
            meta: Default::default(),
        };
        assert_eq!(
            py_json_line(&Entry::File(f)),
            r#"{"type": "file", "path": "d/\u00e9.txt", "size": 3, "mtime_ns": null, "crc32c": null, "mode": null, "uid": null, "gid": null}"#
        );
    }
}
