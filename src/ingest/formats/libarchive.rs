//! Import through libarchive: 7z, rar (v4 and v5), cpio (every variant,
//! compressed or not), rpm payloads, ISO 9660, ar/deb, xar, cab and lha.
//!
//! Why libarchive: it is bsdtar's reader, so "store what `bsdtar -x` extracts"
//! holds by construction, and it has been fuzzed on OSS-Fuzz for years; for
//! most of these formats no Rust reader is both maintained and trustworthy
//! (`docs/IMPORT-FORMATS.md`). The formats enabled are listed explicitly: never
//! `mtree` (whose entries name files on the local disk to read) nor `raw`.
//!
//! The rules, as for tar members (see [`super::super::tar`]):
//!
//! * Regular files are stored with their content, directories as directory rows
//!   with their metadata; symbolic links are skipped and counted (or reported,
//!   [`SymlinkPolicy`]); devices, FIFOs and sockets are skipped and counted.
//! * Hard links become files holding a copy of their target's content. In a cpio
//!   archive (newc, crc) the data of a file with several links travels with its
//!   last link, the earlier ones being empty: those are held back until the data
//!   comes, then stored as copies of it (as `bsdtar -x` leaves them: one inode).
//! * Encrypted members, members whose compression libarchive cannot decode, and
//!   members whose data ends early are reported (the member named) and not
//!   stored; damage that stops libarchive stops the import, after everything
//!   before it was added and committed.
//! * Metadata: the permission bits with the file type added, the modification
//!   time (to the nanosecond where the format keeps it), and the owner where the
//!   format keeps one (not 7z, rar, cab: those rows have none).
//! * Names: UTF-8 as libarchive gives them (it converts the Unicode names of 7z,
//!   rar, xar, cab and Joliet); raw names that are not UTF-8 are decoded from
//!   `--name-encoding`, else reported.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crossbeam_channel::bounded;

use super::ffi;
use super::names::decode_name;
use super::Format;
use crate::core::crc;
use crate::core::entry::{Meta, S_IFDIR, S_IFREG};
use crate::core::error::{Error, Result};
use crate::core::index::Index;
use crate::core::path::{self as mpath, printable};
use crate::core::writer::ArchiveWriter;
use crate::ingest::pipeline::{self, Chunk, Item, Outlet, Skip, CHUNK};
use crate::ingest::{Event, IngestOptions, Problem, Summary, SymlinkPolicy};

/// Read blocks of this size from the file.
const BLOCK: usize = 1 << 20;
/// Consecutive damaged headers skipped before giving up on the input.
const MAX_RETRIES: u32 = 10_000;

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (its target is read as the data).
    Symlink,
    /// A device, FIFO or socket.
    Special,
}

/// One member, copied out of libarchive's entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The name: UTF-8 where libarchive could give it so, else its raw bytes.
    pub name: Vec<u8>,
    /// The first name of the file this one is a hard link to.
    pub hardlink: Option<Vec<u8>>,
    /// What the member is.
    pub kind: MemberType,
    /// Permission bits (`mode & 0o7777`).
    pub perm: u32,
    /// The size the header gives, if any (some formats only know it after reading).
    pub size: Option<u64>,
    /// Modification time in nanoseconds since the Unix epoch, if the format has one.
    pub mtime_ns: Option<i64>,
    /// Owner user id (0 where the format has none).
    pub uid: i64,
    /// Owner group id (0 where the format has none).
    pub gid: i64,
    /// Number of hard links the format records.
    pub nlink: u32,
    /// The member's data is encrypted; it cannot be read without a passphrase.
    pub encrypted: bool,
    /// A warning libarchive gave with this header.
    pub warning: Option<String>,
}

/// What [`Reader::next_entry`] found.
pub enum Next {
    /// A member; its data can be read before asking for the next.
    Entry(Entry),
    /// The end of the input.
    End,
    /// A damaged header was skipped: the member it started is lost.
    Skipped(String),
    /// The input cannot be read further.
    Fatal(String),
}

/// An open libarchive reader.
pub struct Reader {
    a: *mut ffi::archive,
    ownership: bool,
    format: Format,
}

// SAFETY: a libarchive reader has no thread affinity; it is used by one thread at
// a time (it moves with the producer that owns it).
unsafe impl Send for Reader {}

impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: `a` came from archive_read_new and is freed once, here.
        unsafe { ffi::archive_read_free(self.a) };
    }
}

fn text(p: *const libc::c_char) -> Option<Vec<u8>> {
    // SAFETY: libarchive returns NULL or a NUL-terminated string that lives until
    // the next call on the archive or entry; it is copied at once.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
}

impl Reader {
    /// Open `path` for the formats libarchive reads here (and every filter).
    pub fn open(path: &Path, format: Format) -> std::result::Result<Reader, String> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| "a path with a NUL byte".to_string())?;
        // SAFETY: plain calls on a fresh reader; every return code is checked.
        unsafe {
            let a = ffi::archive_read_new();
            if a.is_null() {
                return Err("libarchive could not allocate a reader".into());
            }
            let r = Reader {
                a,
                ownership: !matches!(
                    format,
                    Format::SevenZip | Format::Rar | Format::Rar5 | Format::Cab
                ),
                format,
            };
            ffi::archive_read_support_filter_all(a);
            ffi::archive_read_support_format_7zip(a);
            ffi::archive_read_support_format_ar(a);
            ffi::archive_read_support_format_cab(a);
            ffi::archive_read_support_format_cpio(a);
            ffi::archive_read_support_format_iso9660(a);
            ffi::archive_read_support_format_lha(a);
            ffi::archive_read_support_format_rar(a);
            ffi::archive_read_support_format_rar5(a);
            ffi::archive_read_support_format_xar(a);
            if ffi::archive_read_open_filename(a, c.as_ptr(), BLOCK) != ffi::ARCHIVE_OK {
                return Err(r.error());
            }
            Ok(r)
        }
    }

    /// libarchive's last error message.
    fn error(&self) -> String {
        // SAFETY: `a` is a live reader.
        let msg = text(unsafe { ffi::archive_error_string(self.a) });
        match msg {
            Some(m) if !m.is_empty() => String::from_utf8_lossy(&m).into_owned(),
            _ => "libarchive reported an error without a message".into(),
        }
    }

    /// The format libarchive found (after the first header).
    pub fn format_name(&self) -> String {
        // SAFETY: `a` is a live reader.
        text(unsafe { ffi::archive_format_name(self.a) })
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|| self.format.name())
    }

    /// The next member.
    pub fn next_entry(&mut self) -> Next {
        let mut e: *mut ffi::archive_entry = std::ptr::null_mut();
        // SAFETY: `a` is a live reader; `e` is valid until the next call.
        let r = unsafe { ffi::archive_read_next_header(self.a, &mut e) };
        match r {
            ffi::ARCHIVE_EOF => return Next::End,
            ffi::ARCHIVE_OK | ffi::ARCHIVE_WARN if !e.is_null() => {}
            ffi::ARCHIVE_RETRY | ffi::ARCHIVE_FAILED | ffi::ARCHIVE_WARN => {
                return Next::Skipped(self.error())
            }
            _ => return Next::Fatal(self.error()),
        }
        let warning = (r == ffi::ARCHIVE_WARN).then(|| self.error());
        // SAFETY: `e` is the entry libarchive just filled; its strings are copied.
        unsafe {
            // Under the C.UTF-8 locale of the reading thread, the multibyte name is
            // UTF-8 for the formats that store Unicode, and the raw bytes for the
            // others; the UTF-8 accessor is the fallback.
            let name = text(ffi::archive_entry_pathname(e))
                .or_else(|| text(ffi::archive_entry_pathname_utf8(e)))
                .unwrap_or_default();
            let hardlink = text(ffi::archive_entry_hardlink(e))
                .or_else(|| text(ffi::archive_entry_hardlink_utf8(e)));
            let kind = match ffi::archive_entry_filetype(e) & ffi::AE_IFMT {
                ffi::AE_IFREG => MemberType::File,
                ffi::AE_IFDIR => MemberType::Dir,
                ffi::AE_IFLNK => MemberType::Symlink,
                // No type: a hard link (cpio, tar), or a member of a format without
                // types (GNU ar's deterministic mode): bsdtar extracts a file.
                0 => MemberType::File,
                _ => MemberType::Special,
            };
            let mtime_ns = (ffi::archive_entry_mtime_is_set(e) != 0).then(|| {
                (ffi::archive_entry_mtime(e) as i64)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(ffi::archive_entry_mtime_nsec(e) as i64)
            });
            let size = (ffi::archive_entry_size_is_set(e) != 0)
                .then(|| u64::try_from(ffi::archive_entry_size(e)).unwrap_or(0));
            Next::Entry(Entry {
                name,
                hardlink,
                kind,
                perm: ffi::archive_entry_perm(e) & 0o7777,
                size,
                mtime_ns,
                uid: ffi::archive_entry_uid(e),
                gid: ffi::archive_entry_gid(e),
                nlink: ffi::archive_entry_nlink(e),
                encrypted: ffi::archive_entry_is_encrypted(e) != 0,
                warning,
            })
        }
    }

    /// Read member data; `Ok(0)` at its end.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for writes of its length.
            let n = unsafe { ffi::archive_read_data(self.a, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let code = n as libc::c_int;
            if code == ffi::ARCHIVE_RETRY {
                continue;
            }
            let fatal = code == ffi::ARCHIVE_FATAL;
            return Err(io::Error::other(DataError {
                msg: self.error(),
                fatal,
            }));
        }
    }

    /// Whether uid and gid mean something in this format.
    pub fn has_ownership(&self) -> bool {
        self.ownership
    }
}

/// An error reading member data.
#[derive(Debug)]
struct DataError {
    msg: String,
    /// The input cannot be read further.
    fatal: bool,
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for DataError {}

fn is_fatal(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|i| i.downcast_ref::<DataError>())
        .is_some_and(|d| d.fatal)
}

/// The reading thread's locale is C.UTF-8 while it lives (libarchive converts
/// names to the current locale's encoding); the previous one is restored after.
struct Utf8Locale {
    old: libc::locale_t,
    new: libc::locale_t,
}

impl Utf8Locale {
    fn set() -> Option<Utf8Locale> {
        // SAFETY: newlocale/uselocale with valid arguments; the locale is freed in
        // drop, after the previous one is restored.
        unsafe {
            let new = libc::newlocale(
                libc::LC_CTYPE_MASK,
                c"C.UTF-8".as_ptr(),
                std::ptr::null_mut(),
            );
            if new.is_null() {
                return None;
            }
            let old = libc::uselocale(new);
            Some(Utf8Locale { old, new })
        }
    }
}

impl Drop for Utf8Locale {
    fn drop(&mut self) {
        // SAFETY: restores the locale `set` replaced, then frees its own.
        unsafe {
            libc::uselocale(self.old);
            libc::freelocale(self.new);
        }
    }
}

fn input_error(name: &str, detail: impl Into<String>) -> Error {
    Error::Input {
        path: name.to_string(),
        detail: detail.into(),
    }
}

/// Import the archive at `path` (in `format`, read by libarchive).
pub(crate) fn run(
    w: &mut ArchiveWriter,
    path: &Path,
    format: Format,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let name = path.display().to_string();
    let existing = if opts.skip_existing {
        Some(w.layout().index().to_path_buf())
    } else {
        None
    };
    pipeline::run_sequential(w, opts, sink, move |out: &Outlet| {
        let _locale = Utf8Locale::set();
        let index = match existing.as_deref().map(Index::open_read).transpose() {
            Ok(i) => i,
            Err(e) => {
                out.send_small(0, Item::Fatal(e));
                return;
            }
        };
        let reader = match Reader::open(path, format) {
            Ok(r) => r,
            Err(e) => {
                out.send_small(
                    0,
                    Item::Fatal(input_error(
                        &name,
                        format!("cannot read as {}: {e}", format.name()),
                    )),
                );
                return;
            }
        };
        let mut p = Producer {
            name: &name,
            opts,
            out,
            index,
            seq: 0,
            reader,
            held: Vec::new(),
            held_by: HashMap::new(),
            members: 0,
            bad_names: 0,
        };
        p.run();
    })
}

/// A file with several links whose data has not come yet (cpio newc, crc).
struct Held {
    /// Stored paths, shown names and metadata of the links seen so far.
    links: Vec<(String, String, Meta)>,
    done: bool,
}

struct Producer<'a, 'o> {
    name: &'a str,
    opts: &'a IngestOptions,
    out: &'a Outlet<'o>,
    index: Option<Index>,
    seq: u64,
    reader: Reader,
    held: Vec<Held>,
    /// Stored path of a held link → its group in `held`.
    held_by: HashMap<String, usize>,
    members: u64,
    /// Member names that are not UTF-8 (and not decoded by `--name-encoding`).
    bad_names: u64,
}

impl Producer<'_, '_> {
    fn send(&mut self, item: Item) -> bool {
        let ok = self.out.send_small(self.seq, item);
        self.seq += 1;
        ok
    }

    fn problem(&mut self, name: &[u8], detail: impl Into<String>) -> bool {
        self.send(Item::Problem(Problem::new(name, detail)))
    }

    fn notice(&mut self, text: String) -> bool {
        self.send(Item::Notice(text))
    }

    fn fatal(&mut self, detail: String) {
        let e = input_error(self.name, detail);
        self.send(Item::Fatal(e));
    }

    fn run(&mut self) {
        let mut retries = 0u32;
        loop {
            match self.reader.next_entry() {
                Next::End => break,
                Next::Fatal(msg) => {
                    let what = if self.members == 0 {
                        format!("cannot read as {}", self.reader.format_name())
                    } else {
                        format!(
                            "corrupt or truncated {} archive after {} member{}",
                            self.reader.format_name(),
                            self.members,
                            if self.members == 1 { "" } else { "s" }
                        )
                    };
                    return self.fatal(format!("{what}: {msg}"));
                }
                Next::Skipped(msg) => {
                    retries += 1;
                    if retries > MAX_RETRIES {
                        return self.fatal(format!("too many damaged headers: {msg}"));
                    }
                    let name = self.name.to_string();
                    if !self.problem(
                        name.as_bytes(),
                        format!(
                            "damaged member header, skipped (the member it starts is lost): {msg}"
                        ),
                    ) {
                        return;
                    }
                }
                Next::Entry(e) => {
                    retries = 0;
                    self.members += 1;
                    if !self.member(e) {
                        return;
                    }
                }
            }
        }
        self.flush_held();
        if self.bad_names > 0 {
            let hint = format!("{}: {}", self.name, super::names::hint(self.bad_names));
            self.notice(hint);
        }
    }

    /// The stored path of a raw member name: `Err` after a problem was reported
    /// (false: the run is over), `Ok(None)` when filtered or stripped away.
    fn member_path(&mut self, raw: &[u8]) -> std::result::Result<Option<String>, bool> {
        let text = match decode_name(raw, self.opts.name_encoding) {
            Ok(t) => t,
            Err(detail) => {
                self.bad_names += 1;
                return Err(self.problem(raw, detail));
            }
        };
        if text.contains('\0') {
            return Err(self.problem(raw, "name holds a NUL character; not stored"));
        }
        if let Some(reason) = mpath::unsafe_reason(&text) {
            return Err(self.problem(raw, format!("{reason}; not stored")));
        }
        let norm = mpath::normalize(&text);
        if !norm.is_empty() && !self.opts.filter.selects(&norm) {
            return Ok(None);
        }
        let stored = if norm.is_empty() {
            (self.opts.strip_components == 0).then(String::new)
        } else {
            mpath::strip_components(&norm, self.opts.strip_components).map(str::to_string)
        };
        Ok(stored.and_then(|p| self.opts.place(&norm, p)))
    }

    fn exists(&self, path: &str, dir: bool) -> bool {
        match &self.index {
            Some(i) if dir => i.is_dir(path).unwrap_or(false),
            Some(i) => i.is_file(path).unwrap_or(false),
            None => false,
        }
    }

    /// Handle one member; false when the run is over.
    fn member(&mut self, e: Entry) -> bool {
        let raw = e.name.clone();
        if let Some(w) = &e.warning {
            if !self.notice(format!("{}: {w}", printable(&raw))) {
                return false;
            }
        }
        let owner = |id: i64| {
            if self.reader.has_ownership() {
                u32::try_from(id).ok()
            } else {
                None
            }
        };
        let meta = Meta {
            mode: Some(e.perm),
            uid: owner(e.uid),
            gid: owner(e.gid),
            mtime_ns: e.mtime_ns,
        };
        match e.kind {
            MemberType::Symlink => {
                return match self.opts.symlinks {
                    SymlinkPolicy::Skip => self.send(Item::Skipped(Skip::Symlink)),
                    SymlinkPolicy::Error => self.problem(&raw, "symbolic link; skipped"),
                }
            }
            MemberType::Special => return self.send(Item::Skipped(Skip::Special)),
            _ => {}
        }
        if e.encrypted {
            return self.problem(&raw, "encrypted; skipped");
        }
        let path = match self.member_path(&raw) {
            Ok(Some(p)) => p,
            Ok(None) => return self.send(Item::Skipped(Skip::Quiet)),
            Err(go_on) => return go_on,
        };
        let shown = String::from_utf8_lossy(&raw).into_owned();
        if e.kind == MemberType::Dir {
            if self.exists(&path, true) {
                return self.send(Item::Skipped(Skip::Quiet));
            }
            let meta = Meta {
                mode: meta.mode.map(|m| m | S_IFDIR),
                ..meta
            };
            return self.send(Item::Dir { path, meta });
        }
        let meta = Meta {
            mode: meta.mode.map(|m| m | S_IFREG),
            ..meta
        };
        if path.is_empty() {
            return self.problem(&raw, "a file cannot be stored at the archive root; skipped");
        }
        if self.exists(&path, false) {
            return self.send(Item::Skipped(Skip::Existing));
        }
        let has_data = e.size != Some(0);
        if let Some(target) = &e.hardlink {
            let target = match self.member_path(target) {
                Ok(Some(t)) => t,
                Ok(None) => {
                    return self.problem(
                        &raw,
                        "hard link to a member left out (--include/--exclude, \
                         --strip-components); skipped",
                    )
                }
                Err(go_on) => return go_on,
            };
            if let Some(&g) = self.held_by.get(&target) {
                if !self.held[g].done {
                    if has_data {
                        // The data of the whole group: store it here, the earlier
                        // links as copies of it.
                        if !self.file(path.clone(), meta, e.size, &shown) {
                            return false;
                        }
                        return self.release(g, &path);
                    }
                    self.held_by.insert(path.clone(), g);
                    self.held[g].links.push((path, shown, meta));
                    return true;
                }
            }
            if has_data && e.size.is_some() {
                // A link that carries its own copy of the data (cpio odc).
                return self.file(path, meta, e.size, &shown);
            }
            return self.send(Item::HardLink {
                path,
                target,
                meta,
                shown,
            });
        }
        if e.nlink > 1
            && e.size == Some(0)
            && matches!(self.reader.format, Format::Cpio(_) | Format::Rpm)
        {
            // Its data may come with a later link (cpio newc, crc).
            let g = self.held.len();
            self.held.push(Held {
                links: vec![(path.clone(), shown, meta)],
                done: false,
            });
            self.held_by.insert(path, g);
            return true;
        }
        self.file(path, meta, e.size, &shown)
    }

    /// Store the held links of group `g` as copies of `data_path`.
    fn release(&mut self, g: usize, data_path: &str) -> bool {
        self.held[g].done = true;
        let links = std::mem::take(&mut self.held[g].links);
        for (path, shown, meta) in links {
            let item = Item::HardLink {
                path,
                target: data_path.to_string(),
                meta,
                shown,
            };
            if !self.send(item) {
                return false;
            }
        }
        true
    }

    /// At the end: groups whose data never came are empty files.
    fn flush_held(&mut self) {
        for g in 0..self.held.len() {
            if self.held[g].done {
                continue;
            }
            self.held[g].done = true;
            let mut links = std::mem::take(&mut self.held[g].links).into_iter();
            let Some((first, shown, meta)) = links.next() else {
                continue;
            };
            let data = Vec::new();
            let crc = crc::crc32c(&data);
            if !self.send(Item::File {
                path: first.clone(),
                meta,
                data,
                crc,
            }) {
                return;
            }
            let _ = shown;
            for (path, shown, meta) in links {
                if !self.send(Item::HardLink {
                    path,
                    target: first.clone(),
                    meta,
                    shown,
                }) {
                    return;
                }
            }
        }
    }

    /// Send the data of the current member as the file `path`.
    fn file(&mut self, path: String, meta: Meta, size: Option<u64>, shown: &str) -> bool {
        let threshold = self.opts.stream_threshold();
        let seq = self.seq;
        self.seq += 1;
        let out = self.out;
        let size = match size {
            Some(s) => s,
            None => return self.without_size(seq, path, meta, shown),
        };
        let fail_detail = |e: &io::Error, got: u64| {
            format!("cannot read its data ({got} of {size} bytes read): {e}; skipped")
        };
        if size <= threshold {
            let Some(ticket) = out.reserve(seq, size) else {
                return false;
            };
            let mut data = vec![0u8; size as usize];
            let r = read_full(&mut self.reader, &mut data).and_then(|n| {
                if n < data.len() {
                    return Ok(Err(n));
                }
                let mut extra = [0u8; 1];
                Ok(if self.reader.read(&mut extra)? > 0 {
                    Err(usize::MAX)
                } else {
                    Ok(())
                })
            });
            let (item, fatal) = match r {
                Ok(Ok(())) => {
                    let crc = crc::crc32c(&data);
                    (
                        Item::File {
                            path,
                            meta,
                            data,
                            crc,
                        },
                        None,
                    )
                }
                Ok(Err(n)) => (
                    Item::Problem(Problem::new(shown, short_or_long(n, size))),
                    None,
                ),
                Err(e) => (
                    Item::Problem(Problem::new(shown, fail_detail(&e, 0))),
                    is_fatal(&e).then(|| e.to_string()),
                ),
            };
            if !out.send(seq, item, ticket) {
                return false;
            }
            if let Some(msg) = fatal {
                self.fatal(format!(
                    "cannot read on after member \"{}\": {msg}",
                    printable(shown)
                ));
                return false;
            }
            return true;
        }
        let Some(ticket) = out.reserve(seq, 0) else {
            return false;
        };
        let (tx, rx) = bounded::<Chunk>(2);
        if !out.send(
            seq,
            Item::Stream {
                path,
                meta,
                size,
                chunks: rx,
            },
            ticket,
        ) {
            return false;
        }
        let mut left = size;
        let mut got = 0u64;
        while left > 0 {
            let n = left.min(CHUNK as u64) as usize;
            let mut chunk = vec![0u8; n];
            let failure = match read_full(&mut self.reader, &mut chunk) {
                Ok(k) if k == n => None,
                Ok(k) => Some((short_or_long((got + k as u64) as usize, size), None)),
                Err(e) => Some((fail_detail(&e, got), is_fatal(&e).then(|| e.to_string()))),
            };
            if let Some((detail, fatal)) = failure {
                let _ = tx.send(Chunk::Failed(Problem::new(shown, detail)));
                drop(tx);
                if let Some(msg) = fatal {
                    self.fatal(format!(
                        "cannot read on after member \"{}\": {msg}",
                        printable(shown)
                    ));
                    return false;
                }
                return !self.out.aborted();
            }
            got += n as u64;
            left -= n as u64;
            if tx.send(Chunk::Data(chunk)).is_err() {
                // The writer refused the file (a duplicate, …).
                return !self.out.aborted();
            }
        }
        let mut extra = [0u8; 1];
        match self.reader.read(&mut extra) {
            Ok(0) => true,
            Ok(_) => {
                let _ = tx.send(Chunk::Failed(Problem::new(
                    shown,
                    short_or_long(usize::MAX, size),
                )));
                true
            }
            Err(e) => {
                let _ = tx.send(Chunk::Failed(Problem::new(shown, fail_detail(&e, size))));
                if is_fatal(&e) {
                    drop(tx);
                    self.fatal(format!(
                        "cannot read on after member \"{}\": {e}",
                        printable(shown)
                    ));
                    return false;
                }
                true
            }
        }
    }

    /// A member whose size the format does not tell: streamed as it comes.
    fn without_size(&mut self, seq: u64, path: String, meta: Meta, shown: &str) -> bool {
        let Some(ticket) = self.out.reserve(seq, 0) else {
            return false;
        };
        let (tx, rx) = bounded::<Chunk>(2);
        if !self.out.send(
            seq,
            Item::OpenStream {
                path,
                meta,
                chunks: rx,
            },
            ticket,
        ) {
            return false;
        }
        loop {
            let mut chunk = vec![0u8; CHUNK];
            match read_full(&mut self.reader, &mut chunk) {
                Ok(0) => return true,
                Ok(n) => {
                    chunk.truncate(n);
                    if tx.send(Chunk::Data(chunk)).is_err() {
                        return !self.out.aborted();
                    }
                }
                Err(e) => {
                    let detail = format!("cannot read its data: {e}; skipped");
                    let _ = tx.send(Chunk::Failed(Problem::new(shown, detail)));
                    drop(tx);
                    if is_fatal(&e) {
                        self.fatal(format!(
                            "cannot read on after member \"{}\": {e}",
                            printable(shown)
                        ));
                        return false;
                    }
                    return !self.out.aborted();
                }
            }
        }
    }
}

fn short_or_long(n: usize, size: u64) -> String {
    if n == usize::MAX {
        format!("holds more than the {size} bytes its header says; skipped")
    } else {
        format!("holds {n} bytes instead of the {size} its header says; skipped")
    }
}

/// Fill `buf` from the member's data; the bytes read (fewer only at its end).
fn read_full(r: &mut Reader, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The version of the libarchive linked, as `3.6.2`.
pub fn version() -> String {
    // SAFETY: a plain call without arguments.
    let v = unsafe { ffi::archive_version_number() };
    format!("{}.{}.{}", v / 1_000_000, v / 1000 % 1000, v % 1000)
}
