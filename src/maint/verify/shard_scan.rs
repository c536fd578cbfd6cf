//! The walk over the files in address order: every row checked against the
//! shards it points into (bounds, overlaps, holes), and the bytes read and
//! checksummed by a pool of threads, one job of neighbouring files at a time.

use super::*;

/// What the scan of the file rows found.
#[derive(Default)]
pub(super) struct Scan {
    pub(super) files: u64,
    pub(super) bytes: u64,
    pub(super) checked_files: u64,
    pub(super) checked_bytes: u64,
    pub(super) without_crc: u64,
    /// Highest shard number any decodable row refers to.
    pub(super) last_used: Option<u64>,
    /// Shards referred to but absent: files and bytes affected.
    pub(super) missing: BTreeMap<u64, (u64, u64)>,
    pub(super) summary: SpaceSummary,
    pub(super) shards: Vec<ShardSpace>,
}

/// Files whose bytes one worker reads at once: a contiguous range of a shard.
struct Job {
    span: Span,
    files: Vec<JobFile>,
}

struct JobFile {
    path: String,
    offset: u64,
    size: u64,
    crc: u32,
}

/// Groups files into jobs and hands them to the workers.
struct Planner<'a> {
    job: Option<Job>,
    tx: Option<&'a crossbeam_channel::Sender<Job>>,
}

impl Planner<'_> {
    fn add(&mut self, fi: &FileInfo, crc: u32) {
        let Some(tx) = self.tx else {
            return;
        };
        let file = JobFile {
            path: fi.path.clone(),
            offset: fi.offset,
            size: fi.size,
            crc,
        };
        if let Some(job) = &mut self.job {
            if job.span.add(fi, &JOB) {
                job.files.push(file);
                return;
            }
            let done = self.job.take().expect("checked above");
            let _ = tx.send(done);
        }
        self.job = Some(Job {
            span: Span::of(fi),
            files: vec![file],
        });
    }

    fn flush(&mut self) {
        if let (Some(job), Some(tx)) = (self.job.take(), self.tx) {
            let _ = tx.send(job);
        }
    }
}

/// Shared state of the checksum workers.
struct Checker<'a> {
    disk: &'a BTreeMap<u64, DiskShard>,
    shards: &'a crate::core::shards::ShardSet,
    problems: Mutex<Vec<Finding>>,
    files: AtomicU64,
    bytes: AtomicU64,
    progress: &'a Progress,
}

impl Checker<'_> {
    fn report(&self, shard: u64, jf: &JobFile, kind: FindingKind, message: String) {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Finding {
                kind,
                path: Some(jf.path.clone()),
                shard: Some(shard),
                offset: Some(jf.offset),
                message,
            });
    }

    fn compare(&self, shard: u64, jf: &JobFile, actual: u32) {
        if actual != jf.crc {
            let e = Error::CrcMismatch {
                member: jf.path.clone(),
                expected: jf.crc,
                actual,
            };
            self.report(shard, jf, FindingKind::CrcMismatch, e.to_string());
        }
    }

    /// The open file of shard `n`, reusing the worker's last one.
    fn open<'c>(&self, n: u64, cache: &'c mut Option<(u64, File)>) -> std::io::Result<&'c File> {
        if cache.as_ref().is_none_or(|(m, _)| *m != n) {
            *cache = None;
            let path = self
                .disk
                .get(&n)
                .map(|d| d.path.as_path())
                .unwrap_or(Path::new(""));
            let file = File::open(path)?;
            crate::core::readahead::advise_sequential(&file);
            *cache = Some((n, file));
        }
        Ok(&cache.as_ref().expect("just opened").1)
    }

    /// Read the job's range in pieces small enough to stay in the CPU cache, feeding
    /// each piece to the checksums of the files it holds.
    fn run(&self, job: Job, buf: &mut Vec<u8>, cache: &mut Option<(u64, File)>) {
        let total: u64 = job.files.iter().map(|f| f.size).sum();
        let Some(ds) = self.disk.get(&job.span.shard) else {
            return;
        };
        // A remote shard: the whole span in one request.
        let span = self.shards.fetch_span(
            job.span.shard,
            job.span.start,
            job.span.end - job.span.start,
        );
        let opened = match span {
            Some(_) => None,
            None => Some(self.open(job.span.shard, cache)),
        };
        let file = match opened {
            None => None,
            Some(Ok(f)) => Some(f),
            Some(Err(e)) => {
                for jf in &job.files {
                    let msg = format!("{}: cannot open {}: {e}", jf.path, ds.path.display());
                    self.report(job.span.shard, jf, FindingKind::ReadError, msg);
                }
                return;
            }
        };
        let n = job.files.len();
        let mut crcs = vec![Crc32c::new(); n];
        let mut failed: Option<(u64, String)> = None;
        let mut lo = 0; // files before this one are complete
        let mut pos = job.span.start;
        buf.resize(PIECE, 0);
        while pos < job.span.end {
            let len = (job.span.end - pos).min(PIECE as u64) as usize;
            let piece = &mut buf[..len];
            let read = match (&span, file) {
                (Some(Ok(data)), _) => {
                    let at = (pos - job.span.start) as usize;
                    match data.get(at..at + len) {
                        Some(bytes) => {
                            piece.copy_from_slice(bytes);
                            Ok(())
                        }
                        None => Err(format!(
                            "{}: ends at byte {}, before {}",
                            ds.path.display(),
                            job.span.start + data.len() as u64,
                            pos + len as u64
                        )),
                    }
                }
                (Some(Err(e)), _) => Err(one_line(&e.to_string())),
                (None, Some(file)) => {
                    read_exact_at(file, &ds.path, piece, pos).map_err(|e| one_line(&e.to_string()))
                }
                (None, None) => Err("no shard".to_string()),
            };
            if let Err(e) = read {
                failed = Some((pos, e));
                break;
            }
            let piece_end = pos + len as u64;
            let mut k = lo;
            while k < n && job.files[k].offset < piece_end {
                let jf = &job.files[k];
                let (a, b) = (jf.offset.max(pos), (jf.offset + jf.size).min(piece_end));
                if a < b {
                    crcs[k].update(&piece[(a - pos) as usize..(b - pos) as usize]);
                }
                k += 1;
            }
            while lo < n && job.files[lo].offset + job.files[lo].size <= piece_end {
                lo += 1;
            }
            pos = piece_end;
        }
        for (jf, c) in job.files.iter().zip(&crcs) {
            match &failed {
                Some((at, e)) if jf.offset + jf.size > *at => {
                    let msg = format!("{}: cannot read: {e}", jf.path);
                    self.report(job.span.shard, jf, FindingKind::ReadError, msg);
                }
                _ => self.compare(job.span.shard, jf, c.value()),
            }
        }
        self.files.fetch_add(n as u64, Ordering::Relaxed);
        self.bytes.fetch_add(total, Ordering::Relaxed);
        self.progress.add(n as u64, total);
    }
}

/// A page of rows in address order: decoded, or the decoding error with the path
/// if there is one.
type RowResult = (std::result::Result<FileInfo, String>, Option<String>);

/// A page of file rows in address order (those whose shard and offset are
/// numbers), and the key to go on from when it was full.
fn file_page(i: &Index, after: Option<&ScanKey>) -> Result<(Vec<RowResult>, Option<ScanKey>)> {
    let spec = ScanSpec::new(Table::Files, ScanOrder::Address).with(Cond::NumericAddress);
    raw_rows(i, &spec, after)
}

/// Up to a page of rows of `spec` after `after`, decoded or not.
fn raw_rows(
    i: &Index,
    spec: &ScanSpec,
    after: Option<&ScanKey>,
) -> Result<(Vec<RowResult>, Option<ScanKey>)> {
    let mut out = Vec::new();
    let (_, key) = i.scan_rows(spec, after, PAGE, &mut |row| {
        let decoded = index::decode_file(row);
        let path = match &decoded {
            Ok(_) => None,
            Err(_) => row.get::<_, String>(0).ok(),
        };
        out.push((decoded, path));
        Ok(())
    })?;
    Ok((out, key))
}

/// Rows whose shard or offset is not a number at all (NULL, text, blob).
fn non_numeric_rows(i: &Index) -> Result<Vec<RowResult>> {
    let spec = ScanSpec::new(Table::Files, ScanOrder::Rowid).with(Cond::NotNumericAddress);
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let (rows, key) = raw_rows(i, &spec, after.as_ref())?;
        out.extend(rows.into_iter().map(|(d, p)| {
            // Every such row is reported by its path.
            let path = p.or_else(|| d.as_ref().ok().map(|f| f.path.clone()));
            (d, path)
        }));
        match key {
            Some(k) => after = Some(k),
            None => return Ok(out),
        }
    }
}

/// State of the walk over one shard.
struct ShardWalk {
    shard: u64,
    /// Largest end of a non-empty file so far, and that file.
    covered: Option<(u64, String)>,
}

pub(super) fn scan_files(
    archive: &Archive,
    disk: &BTreeMap<u64, DiskShard>,
    opts: &VerifyOptions,
    f: &mut Findings,
    progress: &Progress,
) -> Scan {
    let mut scan = Scan::default();
    let mut space = SpaceScanner::new(disk.iter().map(|(n, d)| (*n, d.length, d.symlink)));
    // The file that ends last, for quick mode.
    let mut last: Option<FileInfo> = None;

    let bad = archive.with_index(non_numeric_rows);
    if let Some(rows) = f.query("reading files", bad) {
        for (decoded, path) in rows {
            scan.files += 1;
            let detail = match decoded {
                Err(d) => d,
                Ok(fi) => format!("row {:?}: shard or offset is not an integer", fi.path),
            };
            f.problem(
                FindingKind::BadRow,
                path.as_deref(),
                format!("files {detail}"),
            );
        }
    }

    let Some(shards) = f.query("opening the shards", archive.shards()) else {
        return scan;
    };
    let (tx, rx) = crossbeam_channel::bounded::<Job>(opts.workers.max(1) * 2);
    let checker = Checker {
        disk,
        shards,
        problems: Mutex::new(Vec::new()),
        files: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        progress,
    };
    std::thread::scope(|scope| {
        if !opts.quick {
            let workers = if archive.is_remote() {
                opts.workers.max(4)
            } else {
                opts.workers.max(1)
            };
            for _ in 0..workers {
                let rx = rx.clone();
                let checker = &checker;
                scope.spawn(move || {
                    let mut buf = Vec::new();
                    let mut cache = None;
                    for job in rx {
                        checker.run(job, &mut buf, &mut cache);
                    }
                });
            }
        }
        drop(rx);
        let mut planner = Planner {
            job: None,
            tx: (!opts.quick).then_some(&tx),
        };
        let mut walk: Option<ShardWalk> = None;
        let mut key: Option<ScanKey> = None;
        loop {
            let page = archive.with_index(|i| file_page(i, key.as_ref()));
            let Some((rows, next)) = f.query("reading files", page) else {
                break;
            };
            let full = next.is_some();
            for (decoded, path) in rows {
                scan.files += 1;
                let fi = match decoded {
                    Ok(fi) => fi,
                    Err(detail) => {
                        f.problem(
                            FindingKind::BadRow,
                            path.as_deref(),
                            format!("files {detail}"),
                        );
                        continue;
                    }
                };
                scan.bytes += fi.size;
                check_row(&fi, disk, &mut scan, &mut space, &mut walk, f);
                let readable = disk
                    .get(&fi.shard)
                    .is_some_and(|d| d.readable && fi.end() <= d.length);
                if !readable {
                    continue;
                }
                match fi.crc32c {
                    None => scan.without_crc += 1,
                    Some(crc) if fi.size == 0 => {
                        scan.checked_files += 1;
                        if crc != 0 {
                            let e = Error::CrcMismatch {
                                member: fi.path.clone(),
                                expected: crc,
                                actual: 0,
                            };
                            f.problem_at(FindingKind::CrcMismatch, &fi, e.to_string());
                        }
                    }
                    Some(crc) => {
                        planner.add(&fi, crc);
                        if last
                            .as_ref()
                            .is_none_or(|l| (fi.shard, fi.end()) >= (l.shard, l.end()))
                        {
                            last = Some(fi);
                        }
                    }
                }
            }
            key = next;
            if !full {
                break;
            }
        }
        planner.flush();
        drop(tx);
    });
    if opts.quick {
        if let Some(fi) = last {
            scan.checked_files += 1;
            scan.checked_bytes += fi.size;
            let crc = fi.crc32c.unwrap_or(0);
            match archive.shards().and_then(|s| s.read(&fi)) {
                Ok(data) => {
                    let actual = crc::crc32c(&data);
                    if actual != crc {
                        let e = Error::CrcMismatch {
                            member: fi.path.clone(),
                            expected: crc,
                            actual,
                        };
                        f.problem_at(FindingKind::CrcMismatch, &fi, e.to_string());
                    }
                }
                Err(e) => f.problem_at(FindingKind::ReadError, &fi, one_line(&e.to_string())),
            }
        }
    } else {
        scan.checked_files += checker.files.load(Ordering::Relaxed);
        scan.checked_bytes = checker.bytes.load(Ordering::Relaxed);
        let found = checker
            .problems
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        f.problems
            .extend(found.into_iter().filter(|p| !moved_and_fine(archive, p)));
    }
    let (shards, summary, _) = space.finish();
    scan.shards = shards;
    scan.summary = summary;
    scan
}

/// A checksum or read failure of a file that a concurrent writer (defragmentation)
/// moved while it was being checked is not a problem if the file reads back right at
/// its new place.
pub(super) fn moved_and_fine(archive: &Archive, p: &Finding) -> bool {
    if !matches!(p.kind, FindingKind::CrcMismatch | FindingKind::ReadError) {
        return false;
    }
    let Some(path) = &p.path else { return false };
    match archive.with_index(|i| i.file(path)) {
        Ok(Some(now)) if Some(now.shard) != p.shard || Some(now.offset) != p.offset => {
            archive.read_file(&now).is_ok()
        }
        _ => false,
    }
}

/// What is wrong with a stored path that failed the form check. A NUL byte also
/// breaks SQLite's string functions (the generated `parent` column).
pub(super) fn path_fault(p: &str) -> &'static str {
    if p.contains('\0') {
        "path contains a NUL character"
    } else {
        "path is not normalized"
    }
}

/// The per-row checks: path form, shard present, extent inside it, no overlap.
fn check_row(
    fi: &FileInfo,
    disk: &BTreeMap<u64, DiskShard>,
    scan: &mut Scan,
    space: &mut SpaceScanner,
    walk: &mut Option<ShardWalk>,
    f: &mut Findings,
) {
    if fi.path.is_empty() || mpath::normalize(&fi.path) != fi.path || fi.path.contains('\0') {
        f.problem_at(
            FindingKind::BadPath,
            fi,
            format!("file {:?}: {}", fi.path, path_fault(&fi.path)),
        );
    } else if !mpath::is_safe_stored(&fi.path) {
        f.warn(
            FindingKind::UnsafePath,
            Some(&fi.path),
            format!(
                "file {:?}: path has '..' components; it is never extracted",
                fi.path
            ),
        );
    }
    scan.last_used = Some(scan.last_used.map_or(fi.shard, |l| l.max(fi.shard)));
    let overlaps = space.push(fi.shard, fi.offset, fi.size);

    if walk.as_ref().is_none_or(|w| w.shard != fi.shard) {
        *walk = Some(ShardWalk {
            shard: fi.shard,
            covered: None,
        });
    }
    let w = walk.as_mut().expect("just set");
    if fi.size > 0 {
        if overlaps {
            if let Some((end, other)) = &w.covered {
                f.problem_at(
                    FindingKind::Overlap,
                    fi,
                    format!(
                        "{}: bytes {}..{} of shard {} overlap {other:?} (which ends at {end})",
                        fi.path,
                        fi.offset,
                        fi.end(),
                        fi.shard
                    ),
                );
            }
        }
        if w.covered.as_ref().is_none_or(|(end, _)| fi.end() > *end) {
            w.covered = Some((fi.end(), fi.path.clone()));
        }
    }

    match disk.get(&fi.shard) {
        Some(d) if d.readable => {
            if fi.end() > d.length {
                f.problem_at(
                    FindingKind::ExtentPastEnd,
                    fi,
                    format!(
                        "{}: bytes {}..{} are past the end of {} ({} bytes)",
                        fi.path,
                        fi.offset,
                        fi.end(),
                        d.path.display(),
                        d.length
                    ),
                );
            }
        }
        Some(_) => {} // reported when opening the shard
        None => {
            let m = scan.missing.entry(fi.shard).or_default();
            m.0 += 1;
            m.1 += fi.size;
        }
    }
}

/// Shard-level checks: numbering, referenced shards present, nothing after the
/// last used one.
pub(super) fn check_shards(
    layout: &Layout,
    disk: &BTreeMap<u64, DiskShard>,
    scan: &Scan,
    f: &mut Findings,
) {
    for (&n, &(files, bytes)) in &scan.missing {
        f.problems.push(Finding {
            kind: FindingKind::MissingShard,
            path: None,
            shard: Some(n),
            offset: None,
            message: format!(
                "{}: missing: {files} file(s) ({bytes} bytes) are stored in it",
                layout.shard_path(n).display()
            ),
        });
    }
    let max_present = disk.keys().next_back().copied();
    if let Some(max) = max_present {
        for n in 0..max {
            if !disk.contains_key(&n) && !scan.missing.contains_key(&n) {
                f.problems.push(Finding {
                    kind: FindingKind::MissingShard,
                    path: None,
                    shard: Some(n),
                    offset: None,
                    message: format!(
                        "{}: missing: the numbering has a gap (shard {max} exists)",
                        layout.shard_path(n).display()
                    ),
                });
            }
        }
    }
    if disk.is_empty() && scan.missing.is_empty() {
        f.warn(
            FindingKind::NoShard,
            None,
            format!(
                "{}: no shard file; Python barecat expects one",
                layout.shard_path(0).display()
            ),
        );
    }
    for (&n, d) in disk {
        let extra = match scan.last_used {
            Some(last) => n > last,
            None => n > 0,
        };
        if !extra {
            continue;
        }
        f.warnings.push(Finding {
            kind: FindingKind::ExtraShard,
            path: None,
            shard: Some(n),
            offset: None,
            message: format!(
                "{}: shard after the last one any file is stored in ({} bytes, reclaimable)",
                d.path.display(),
                d.length
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_of_empty_files_are_bounded() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut p = Planner {
            job: None,
            tx: Some(&tx),
        };
        for i in 0..10_000u64 {
            let fi = FileInfo::empty_for_test(i);
            p.add(&fi, 0);
        }
        p.flush();
        drop(tx);
        let sizes: Vec<usize> = rx.iter().map(|j| j.files.len()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 10_000);
        assert!(sizes.iter().all(|&n| n <= JOB.files), "{sizes:?}");
    }
}
