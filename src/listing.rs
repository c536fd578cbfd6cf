//! Listing archive contents for people and scripts: `ls`-style short and long
//! formats, and JSON lines.

use std::collections::HashMap;
use std::ffi::CStr;
use std::io::Write;

use serde::Serialize;

use crate::archive::Archive;
use crate::entry::{Entry, Order, S_IFDIR, S_IFLNK, S_IFMT};
use crate::error::{Error, Result};
use crate::glob::{has_wildcards, GlobOptions};
use crate::path as mpath;

/// What to print.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListOptions {
    /// Long format: mode, links, owner, group, size, time, name.
    pub long: bool,
    /// All files below each directory, by full path.
    pub recursive: bool,
    /// One JSON object per line instead of text.
    pub json: bool,
}

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

/// Looks up user and group names, remembering the answers.
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
    let now_year = local_tm(crate::index::now_ns() / 1_000_000_000).map(|t| t.tm_year);
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

/// One line of the long format for `entry`, shown as `name`.
pub fn long_line(names: &mut Names, entry: &Entry, name: &str) -> String {
    let meta = entry.meta();
    let nlink = match entry {
        Entry::File(_) => 1,
        Entry::Dir(d) => d.num_subdirs + 2,
    };
    format!(
        "{} {:>4} {:<8} {:<8} {:>8} {} {}",
        mode_string(meta.mode, entry.is_dir()),
        nlink,
        names.user(meta.uid),
        names.group(meta.gid),
        entry.size(),
        format_time(meta.mtime_ns),
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

/// One JSON object (one line) describing `entry`.
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

struct Printer<'a> {
    opts: ListOptions,
    names: Names,
    out: &'a mut dyn Write,
}

impl Printer<'_> {
    fn entry(&mut self, entry: &Entry, name: &str) -> Result<()> {
        let line = if self.opts.json {
            json_line(entry)
        } else if self.opts.long {
            long_line(&mut self.names, entry, name)
        } else if entry.is_dir() {
            format!("{name}/")
        } else {
            name.to_string()
        };
        writeln!(self.out, "{line}").map_err(|e| Error::io("<output>", e))
    }

    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.out, "{text}").map_err(|e| Error::io("<output>", e))
    }
}

/// List `paths` (the root when empty) to `out`. Errors about single paths (not
/// found, …) are returned in the list and do not stop the listing of the others.
pub fn list(
    archive: &Archive,
    paths: &[String],
    opts: ListOptions,
    out: &mut dyn Write,
) -> Result<Vec<Error>> {
    let mut p = Printer {
        opts,
        names: Names::default(),
        out,
    };
    let roots: Vec<String> = if paths.is_empty() {
        vec![String::new()]
    } else {
        paths.to_vec()
    };
    let headers = roots.len() > 1;
    let mut problems = Vec::new();
    for (n, raw) in roots.iter().enumerate() {
        if has_wildcards(raw) {
            let opts = GlobOptions {
                recursive: raw.contains("**"),
                include_hidden: false,
            };
            let pattern = mpath::normalize(raw);
            let matches = archive.glob(&pattern, opts)?;
            if matches.is_empty() {
                problems.push(Error::NotFound(raw.clone()));
            }
            for e in &matches {
                p.entry(e, e.path())?;
            }
            continue;
        }
        let entry = match archive.lookup(raw)? {
            Some(e) => e,
            None => {
                problems.push(Error::NotFound(mpath::normalize(raw)));
                continue;
            }
        };
        match entry {
            Entry::File(_) => p.entry(&entry, entry.path())?,
            Entry::Dir(ref d) if opts.recursive => {
                for f in archive.files(Order::Path, &d.path) {
                    let f = Entry::File(f?);
                    p.entry(&f, f.path())?;
                }
            }
            Entry::Dir(ref d) => {
                if headers {
                    if n > 0 {
                        p.line("")?;
                    }
                    let shown = if d.path.is_empty() { "." } else { &d.path };
                    p.line(&format!("{shown}:"))?;
                }
                let listing = archive.listdir(&d.path)?;
                let mut children: Vec<Entry> = listing
                    .dirs
                    .into_iter()
                    .map(Entry::Dir)
                    .chain(listing.files.into_iter().map(Entry::File))
                    .collect();
                children.sort_by(|a, b| mpath::basename(a.path()).cmp(mpath::basename(b.path())));
                if opts.long && !opts.json {
                    let total: u64 = children.iter().map(Entry::size).sum();
                    p.line(&format!("total {total}"))?;
                }
                for c in &children {
                    let name = if opts.json {
                        c.path()
                    } else {
                        mpath::basename(c.path())
                    };
                    p.entry(c, name)?;
                }
            }
        }
    }
    Ok(problems)
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
    fn times() {
        assert_eq!(format_time(None).len(), 12);
        assert_eq!(format_time(Some(0)).len(), 12);
    }
}
