//! `barecat browse`: a ranger-like browser with three columns: the parent
//! directory, the current directory, and a preview of the selected entry (a
//! directory's contents; a file's metadata and its first lines as text, or as a
//! hex dump when it is binary).
//!
//! The keys are Python barecat's: `h j k l` and the arrows, Enter, `g`/`G`
//! (Home/End), Page Up/Down, Tab to move the focus between the list and the
//! preview (where `j`/`k` scroll), `q` to quit. Directories are listed
//! directories first, then files, each by name, a few pages at a time
//! ([`Pager`]), so that a directory of millions of entries opens at once; a
//! file's preview reads at most [`PREVIEW_BYTES`] of it.

use crate::core::archive::Archive;
use crate::core::entry::FileInfo;
use crate::core::error::{Error, Result};
use crate::core::index::ncdu::ChildSort;
use crate::core::path as mpath;
use crate::listing::{format_time, mode_string};

use super::pager::{Order, Pager};
use super::term::{fit, printable, Input, Key, Look, Row, Screen};

/// Rows read per page.
const PAGE: usize = 200;
/// Bytes of a file read for its preview.
pub const PREVIEW_BYTES: u64 = 256 << 10;

const ORDER: Order = Order {
    sort: ChildSort::Name,
    descending: false,
    dirs_first: true,
};

/// A size as Python barecat's browser shows it: `123 B`, `1.5 KB`, `2.0 GB`.
pub fn format_size(size: u64) -> String {
    let mut v = size as f64;
    for unit in ["B", "KB", "MB", "GB"] {
        if v < 1024.0 {
            return if unit == "B" {
                format!("{size} B")
            } else {
                format!("{v:.1} {unit}")
            };
        }
        v /= 1024.0;
    }
    format!("{v:.1} TB")
}

/// Is `data` (the first bytes of a file) binary: a NUL byte, or not UTF-8 (an
/// incomplete character at the very end of a cut read does not count)?
pub fn is_binary(data: &[u8], cut: bool) -> bool {
    if data.contains(&0) {
        return true;
    }
    match std::str::from_utf8(data) {
        Ok(_) => false,
        Err(e) => !(cut && e.error_len().is_none()),
    }
}

/// A hex dump of `data` from `offset` on, `per_line` bytes a line:
/// `00000010  48 65 6c 6c  |Hell|`.
pub fn hex_lines(data: &[u8], per_line: usize) -> Vec<String> {
    let per_line = per_line.max(1);
    data.chunks(per_line)
        .enumerate()
        .map(|(n, chunk)| {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            let ascii: String = chunk
                .iter()
                .map(|&b| {
                    if (0x20..0x7f).contains(&b) {
                        b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            format!(
                "{:08x}  {:<w$}  |{ascii}|",
                n * per_line,
                hex.join(" "),
                w = per_line * 3 - 1
            )
        })
        .collect()
}

/// Bytes per line of a hex dump that fits `width` columns (a multiple of 4).
pub fn hex_width(width: usize) -> usize {
    // 8 + 2 + 3n - 1 + 2 + n + 2 = 4n + 13
    let n = width.saturating_sub(13) / 4;
    (n / 4 * 4).clamp(4, 16)
}

/// What the preview column shows.
enum Preview {
    Lines(Vec<String>),
    /// A file: metadata lines, then its text or its bytes.
    File {
        head: Vec<String>,
        text: Option<Vec<String>>,
        bytes: Vec<u8>,
        size: u64,
    },
}

/// Which column has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The list of the current directory.
    List,
    /// The preview of the selected file.
    Preview,
}

/// The model of the browser.
pub struct Browser {
    archive: Archive,
    cwd: String,
    list: Pager,
    cursor: usize,
    scroll: usize,
    /// The parent's children and the position of `cwd` among them.
    parent: Option<(Pager, usize)>,
    focus: Focus,
    /// Path previewed and its preview.
    preview: Option<(String, Preview)>,
    preview_offset: usize,
}

fn children_total(archive: &Archive, dir: &str) -> Result<u64> {
    let d = archive
        .with_index(|i| i.dir(dir))?
        .ok_or_else(|| Error::NotFound(dir.to_string()))?;
    Ok((d.num_subdirs.max(0) + d.num_files.max(0)) as u64)
}

impl Browser {
    /// A browser of `archive` showing the directory `start`; a missing directory is an
    /// error.
    pub fn new(archive: Archive, start: &str) -> Result<Browser> {
        let start = mpath::normalize(start);
        if archive.with_index(|i| i.dir(&start))?.is_none() {
            return Err(Error::NotFound(start));
        }
        let list = Pager::new(
            &archive,
            &start,
            children_total(&archive, &start)?,
            ORDER,
            PAGE,
        )?;
        let mut b = Browser {
            archive,
            cwd: start,
            list,
            cursor: 0,
            scroll: 0,
            parent: None,
            focus: Focus::List,
            preview: None,
            preview_offset: 0,
        };
        b.load_parent()?;
        Ok(b)
    }

    /// The directory shown.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// Which column has the focus.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    fn load_parent(&mut self) -> Result<()> {
        self.parent = match mpath::parent(&self.cwd) {
            None => None,
            Some(p) => {
                let mut pager = Pager::new(
                    &self.archive,
                    p,
                    children_total(&self.archive, p)?,
                    ORDER,
                    PAGE,
                )?;
                let pos = pager.seek(&self.archive, &self.cwd, true)?.unwrap_or(0);
                Some((pager, pos))
            }
        };
        Ok(())
    }

    fn open(&mut self, dir: &str) -> Result<()> {
        self.list = Pager::new(
            &self.archive,
            dir,
            children_total(&self.archive, dir)?,
            ORDER,
            PAGE,
        )?;
        self.cwd = dir.to_string();
        self.cursor = 0;
        self.scroll = 0;
        self.focus = Focus::List;
        self.reset_preview();
        self.load_parent()
    }

    fn reset_preview(&mut self) {
        self.preview = None;
        self.preview_offset = 0;
    }

    fn selected(&mut self) -> Result<Option<crate::core::index::ncdu::Child>> {
        Ok(self.list.get(&self.archive, self.cursor)?.cloned())
    }

    fn up(&mut self) -> Result<()> {
        let Some(parent) = mpath::parent(&self.cwd).map(str::to_string) else {
            return Ok(());
        };
        let came_from = self.cwd.clone();
        self.open(&parent)?;
        if let Some(pos) = self.list.seek(&self.archive, &came_from, true)? {
            self.cursor = pos;
        }
        Ok(())
    }

    fn set_cursor(&mut self, c: usize) {
        let c = c.min(self.list.len().saturating_sub(1));
        if c != self.cursor {
            self.cursor = c;
            self.reset_preview();
        }
    }

    /// Apply a key; `page` rows are on the screen. False to quit.
    pub fn key(&mut self, key: Key, page: usize) -> Result<bool> {
        let page = page.max(1);
        let preview = self.focus == Focus::Preview;
        match key {
            Key::Char('q') | Key::Interrupt => return Ok(false),
            Key::Char('j') | Key::Down if preview => self.preview_offset += 1,
            Key::Char('j') | Key::Down => self.set_cursor(self.cursor + 1),
            Key::Char('k') | Key::Up if preview => {
                self.preview_offset = self.preview_offset.saturating_sub(1)
            }
            Key::Char('k') | Key::Up => self.set_cursor(self.cursor.saturating_sub(1)),
            Key::Char('l') | Key::Right | Key::Enter if !preview => {
                if let Some(c) = self.selected()? {
                    if c.is_dir {
                        self.open(&c.path)?;
                    } else {
                        self.focus = Focus::Preview;
                    }
                }
            }
            Key::Char('h') | Key::Left | Key::Backspace => {
                if preview {
                    self.focus = Focus::List;
                } else {
                    self.up()?;
                }
            }
            Key::Char('g') | Key::Home if preview => self.preview_offset = 0,
            Key::Char('g') | Key::Home => self.set_cursor(0),
            Key::Char('G') | Key::End if preview => self.preview_offset = usize::MAX / 2,
            Key::Char('G') | Key::End => self.set_cursor(self.list.len().saturating_sub(1)),
            Key::PageUp if preview => {
                self.preview_offset = self.preview_offset.saturating_sub(page)
            }
            Key::PageUp => self.set_cursor(self.cursor.saturating_sub(page)),
            Key::PageDown if preview => self.preview_offset += page,
            Key::PageDown => self.set_cursor(self.cursor + page),
            Key::Tab => {
                self.focus = if preview { Focus::List } else { Focus::Preview };
            }
            _ => {}
        }
        Ok(true)
    }

    fn file_preview(&self, fi: &FileInfo) -> Preview {
        let mut head = vec![
            format!("{} ({} bytes)", format_size(fi.size), fi.size),
            format!(
                "{}  {}",
                mode_string(fi.meta.mode, false),
                format_time(fi.meta.mtime_ns).trim()
            ),
            match fi.crc32c {
                Some(c) => format!("crc32c {c:08x}, shard {} @ {}", fi.shard, fi.offset),
                None => format!("shard {} @ {}", fi.shard, fi.offset),
            },
            String::new(),
        ];
        let n = fi.size.min(PREVIEW_BYTES);
        match self.archive.read_range(fi, 0, n) {
            Ok(bytes) => {
                let cut = n < fi.size;
                let text = (!is_binary(&bytes, cut)).then(|| {
                    let s = String::from_utf8_lossy(&bytes);
                    let mut lines: Vec<String> = s
                        .split('\n')
                        .map(|l| printable(&l.replace('\t', "    ")))
                        .collect();
                    if lines.last().is_some_and(|l| l.is_empty()) {
                        lines.pop();
                    }
                    lines
                });
                Preview::File {
                    head,
                    text,
                    bytes,
                    size: fi.size,
                }
            }
            Err(e) => {
                head.push(format!("[cannot read: {}]", printable(&e.to_string())));
                Preview::Lines(head)
            }
        }
    }

    fn load_preview(&mut self, rows: usize) -> Result<()> {
        let Some(sel) = self.selected()? else {
            self.preview = Some((String::new(), Preview::Lines(vec![])));
            return Ok(());
        };
        if self.preview.as_ref().is_some_and(|(p, _)| *p == sel.path) {
            return Ok(());
        }
        let preview = if sel.is_dir {
            let total = children_total(&self.archive, &sel.path)?;
            let mut pager = Pager::new(&self.archive, &sel.path, total, ORDER, rows.max(1))?;
            let mut lines = Vec::new();
            for i in 0..rows.min(pager.len()) {
                if let Some(c) = pager.get(&self.archive, i)? {
                    let name = printable(mpath::basename(&c.path));
                    lines.push(if c.is_dir { format!("{name}/") } else { name });
                }
            }
            if lines.is_empty() {
                lines.push("[Empty directory]".into());
            }
            Preview::Lines(lines)
        } else {
            match self.archive.with_index(|i| i.file(&sel.path))? {
                Some(fi) => self.file_preview(&fi),
                None => Preview::Lines(vec!["[Cannot read file]".into()]),
            }
        };
        self.preview = Some((sel.path, preview));
        Ok(())
    }

    fn preview_lines(&self, width: usize) -> Vec<String> {
        let Some((_, p)) = &self.preview else {
            return vec![];
        };
        match p {
            Preview::Lines(l) => l.clone(),
            Preview::File {
                head,
                text,
                bytes,
                size,
            } => {
                let mut out = head.clone();
                match text {
                    Some(t) => out.extend(t.iter().cloned()),
                    None => out.extend(hex_lines(bytes, hex_width(width))),
                }
                out.push(String::new());
                if (bytes.len() as u64) < *size {
                    out.push(format!(
                        "[first {} of {} shown]",
                        format_size(bytes.len() as u64),
                        format_size(*size)
                    ));
                } else {
                    out.push(format!("[EOF - {}]", format_size(*size)));
                }
                out
            }
        }
    }

    /// The screen as rows of text, `width` × `height`.
    pub fn render(&mut self, width: usize, height: usize) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(height);
        if width == 0 || height == 0 {
            return Ok(out);
        }
        let c1 = (width / 5).max(15).min(width);
        let c2 = (width * 35 / 100).max(20).min(width - c1);
        let c3 = width.saturating_sub(c1 + c2 + 2);
        let visible = height - 1;
        // The list column scrolls to keep the cursor in view.
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + visible {
            self.scroll = self.cursor + 1 - visible;
        }
        self.load_preview(visible)?;
        let preview = self.preview_lines(c3);
        let max_offset = preview.len().saturating_sub(visible);
        self.preview_offset = self.preview_offset.min(max_offset);
        // The parent column: a window around the current directory.
        let mut parent_rows: Vec<(String, Look)> = Vec::new();
        if let Some((pager, pos)) = &mut self.parent {
            let first = pos.saturating_sub(visible / 2);
            for i in first..(first + visible).min(pager.len()) {
                if let Some(c) = pager.get(&self.archive, i)? {
                    let name = printable(mpath::basename(&c.path));
                    let text = if c.is_dir { format!("{name}/") } else { name };
                    let look = match (i == *pos, c.is_dir) {
                        (true, _) => Look::ReverseBold,
                        (false, true) => Look::Bold,
                        _ => Look::Plain,
                    };
                    parent_rows.push((text, look));
                }
            }
        }
        for y in 0..visible {
            let mut spans = Vec::with_capacity(5);
            match parent_rows.get(y) {
                Some((t, l)) => spans.push((fit(t, c1), *l)),
                None => spans.push((fit("", c1), Look::Plain)),
            }
            spans.push(("│".to_string(), Look::Plain));
            let i = self.scroll + y;
            match self.list.get(&self.archive, i)?.cloned() {
                Some(c) => {
                    let name = printable(mpath::basename(&c.path));
                    let text = if c.is_dir { format!("{name}/") } else { name };
                    let look = match (i == self.cursor, c.is_dir) {
                        (true, true) => Look::ReverseBold,
                        (true, false) => Look::Reverse,
                        (false, true) => Look::Bold,
                        _ => Look::Plain,
                    };
                    spans.push((fit(&text, c2), look));
                }
                None => spans.push((fit("", c2), Look::Plain)),
            }
            spans.push(("│".to_string(), Look::Plain));
            let line = preview
                .get(self.preview_offset + y)
                .map(String::as_str)
                .unwrap_or("");
            let look = if self.focus == Focus::List {
                Look::Dim
            } else {
                Look::Plain
            };
            spans.push((fit(line, c3), look));
            out.push(Row { spans });
        }
        let mut status = format!(" /{} | {} items", printable(&self.cwd), self.list.len());
        if let Some(c) = self.list.get(&self.archive, self.cursor)?.cloned() {
            if !c.is_dir {
                status += &format!(" | {}", format_size(c.size.max(0) as u64));
            }
        }
        if self.focus == Focus::Preview {
            status += " | preview";
        }
        status += " | q:quit h/l:nav j/k:move tab:focus";
        out.push(Row::with(fit(&status, width), Look::Reverse));
        Ok(out)
    }
}

/// Run the browser on the terminal until the user quits.
pub fn run(archive: Archive, start: &str) -> Result<()> {
    let mut model = Browser::new(archive, start)?;
    let mut screen = Screen::open().map_err(|e| Error::io("<terminal>", e))?;
    let term = |e: std::io::Error| Error::io("<terminal>", e);
    loop {
        let (w, h) = screen.size().map_err(term)?;
        let rows = model.render(w as usize, h as usize)?;
        screen.draw(&rows, None).map_err(term)?;
        match screen.next_input().map_err(term)? {
            Input::Quit => return Ok(()),
            Input::Redraw => {}
            Input::Key(k) => {
                if !model.key(k, (h as usize).saturating_sub(1))? {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_binary_and_hex() {
        assert_eq!(format_size(100), "100 B");
        assert_eq!(format_size(1536), "1.5 KB");
        assert_eq!(format_size(3 << 30), "3.0 GB");
        assert!(!is_binary(b"hello\n", false));
        assert!(is_binary(b"he\0llo", false));
        assert!(is_binary(b"\xff\xfe", false));
        // A multi-byte character cut by the end of the read is still text.
        assert!(!is_binary(&"é".as_bytes()[..1], true));
        assert!(is_binary(&"é".as_bytes()[..1], false));
        assert_eq!(hex_width(34), 4);
        assert_eq!(hex_width(80), 16);
        assert_eq!(
            hex_lines(b"Hello\x00", 4),
            vec![
                "00000000  48 65 6c 6c  |Hell|",
                "00000004  6f 00        |o.|"
            ]
        );
    }
}
