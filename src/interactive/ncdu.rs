//! `barecat ncdu`: a disk-usage browser in the spirit of ncdu, on the directory
//! statistics of the index.
//!
//! Every size and count shown comes from the `dirs` table (`size_tree`,
//! `num_files_tree`) or a file's own row: no file below the directory is visited,
//! so a directory of a ten-million-file archive opens at once. A directory's
//! children are read through a [`Pager`], a few pages at a time, sorted by size
//! (the default), file count or name, either way round.
//!
//! The rows look like Python barecat's `ncdu` (size, file count, a bar of the
//! share of the directory's size, the name, directories with a leading `/`), so
//! the two can be compared screen to screen. [`Ncdu`] is the model (what to show,
//! navigation, sorting) and renders to text rows; [`run`] drives it on a terminal.

use crate::core::archive::Archive;
use crate::core::entry::DirInfo;
use crate::core::error::{Error, Result};
use crate::core::index::ncdu::ChildSort;
use crate::core::path as mpath;

use super::pager::{Order, Pager};
use super::term::{fit, printable, Input, Key, Look, Row, Screen};

/// Rows read per page.
const PAGE: usize = 200;
/// Columns of a row: size, count, bar; the name starts after them.
const SIZE_W: usize = 12;
const COUNT_W: usize = 7;
const BAR_W: usize = 20;
const NAME_AT: usize = SIZE_W + COUNT_W + BAR_W + 4;

/// A size as Python barecat's ncdu shows it: `  123 B`, `  1.5 KiB`, `  2.0 GiB`.
pub fn format_size(size: i64) -> String {
    if size < 1024 {
        return format!("{size:5} B");
    }
    let mut v = size as f64;
    for unit in ["K", "M", "G", "T", "P"] {
        v /= 1024.0;
        if v < 1000.0 {
            return format!("{v:5.1} {unit}iB");
        }
    }
    format!("{v:5.1} EiB")
}

/// A file count in six columns: `    12`, ` 12.3K`, `  1.2M` (blank for 0).
pub fn format_count(count: i64) -> String {
    if count == 0 {
        "      ".into()
    } else if count < 1000 {
        format!("{count:>6}")
    } else if count < 1_000_000 {
        format!("{:>5.1}K", count as f64 / 1000.0)
    } else {
        format!("{:>5.1}M", count as f64 / 1_000_000.0)
    }
}

/// The bar of `size` out of `total`: `[#####     ]`.
pub fn bar(size: i64, total: i64) -> String {
    let fill = if total > 0 && size > 0 {
        ((BAR_W as f64 * size as f64 / total as f64) as usize).min(BAR_W)
    } else {
        0
    };
    format!("[{}{}]", "#".repeat(fill), " ".repeat(BAR_W - fill))
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Select the row above.
    Up,
    /// Select the row below.
    Down,
    /// Up one screen.
    PageUp,
    /// Down one screen.
    PageDown,
    /// To the first row.
    Home,
    /// To the last row.
    End,
    /// Into the selected directory.
    Enter,
    /// Back to the parent directory.
    Back,
    /// Sort by this (again: the other way round).
    Sort(ChildSort),
    /// Show or hide the help.
    Help,
    /// Leave the program.
    Quit,
}

/// The action of a key.
pub fn action(key: Key) -> Option<Action> {
    Some(match key {
        Key::Char('q') | Key::Interrupt => Action::Quit,
        Key::Char('j') | Key::Down => Action::Down,
        Key::Char('k') | Key::Up => Action::Up,
        Key::Char('l') | Key::Right | Key::Enter => Action::Enter,
        Key::Char('h') | Key::Left | Key::Backspace | Key::Char('<') => Action::Back,
        Key::Char('g') | Key::Home => Action::Home,
        Key::Char('G') | Key::End => Action::End,
        Key::PageUp => Action::PageUp,
        Key::PageDown => Action::PageDown,
        Key::Char('s') => Action::Sort(ChildSort::Size),
        Key::Char('n') => Action::Sort(ChildSort::Name),
        Key::Char('c') | Key::Char('C') => Action::Sort(ChildSort::Count),
        Key::Char('?') => Action::Help,
        _ => return None,
    })
}

/// The help box.
pub const HELP: &[&str] = &[
    "",
    "  barecat ncdu: keys",
    "",
    "  up, k          move up",
    "  down, j        move down",
    "  page up/down   move a screen",
    "  home g, end G  first, last entry",
    "  right l enter  open the directory",
    "  left h bksp    back to the parent",
    "  s              sort by size",
    "  C (or c)       sort by file count",
    "  n              sort by name",
    "                 (again: the other way)",
    "  ?              this help",
    "  q, Ctrl-C      quit",
    "",
    "  press any key",
    "",
];

/// The model of the ncdu screen.
pub struct Ncdu {
    archive: Archive,
    name: String,
    cwd: DirInfo,
    pager: Pager,
    order: Order,
    /// Selected row (row 0 is `..` below the root).
    cursor: usize,
    /// First row shown.
    scroll: usize,
    /// Directories entered, with the row selected in each.
    stack: Vec<(String, usize)>,
    /// The help is shown over the listing.
    pub help: bool,
}

fn dir_info(archive: &Archive, path: &str) -> Result<DirInfo> {
    archive.with_index(|i| i.dir(path))?.ok_or_else(|| {
        let is_file = archive.with_index(|i| i.is_file(path)).unwrap_or(false);
        if is_file {
            Error::NotADirectory(path.to_string())
        } else {
            Error::NotFound(path.to_string())
        }
    })
}

fn child_count(d: &DirInfo) -> u64 {
    (d.num_subdirs.max(0) + d.num_files.max(0)) as u64
}

impl Ncdu {
    /// Open `start` (a directory path in the archive) of `archive`, shown under
    /// `name`.
    pub fn new(archive: Archive, name: &str, start: &str) -> Result<Ncdu> {
        let start = mpath::normalize(start);
        let cwd = dir_info(&archive, &start)?;
        let order = Order {
            sort: ChildSort::Size,
            descending: true,
            dirs_first: false,
        };
        let pager = Pager::new(&archive, &start, child_count(&cwd), order, PAGE)?;
        Ok(Ncdu {
            archive,
            name: name.to_string(),
            cwd,
            pager,
            order,
            cursor: 0,
            scroll: 0,
            stack: Vec::new(),
            help: false,
        })
    }

    /// The directory shown.
    pub fn cwd(&self) -> &str {
        &self.cwd.path
    }

    fn has_up(&self) -> bool {
        !self.cwd.path.is_empty()
    }

    fn rows(&self) -> usize {
        self.pager.len() + self.has_up() as usize
    }

    /// The selected row: `None` for `..`.
    fn selected(&mut self) -> Result<Option<crate::core::index::ncdu::Child>> {
        let up = self.has_up() as usize;
        if self.cursor < up {
            return Ok(None);
        }
        Ok(self.pager.get(&self.archive, self.cursor - up)?.cloned())
    }

    fn open(&mut self, path: &str) -> Result<()> {
        let d = dir_info(&self.archive, path)?;
        self.pager = Pager::new(&self.archive, path, child_count(&d), self.order, PAGE)?;
        self.cwd = d;
        self.cursor = 0;
        self.scroll = 0;
        Ok(())
    }

    fn back(&mut self) -> Result<()> {
        let Some(parent) = mpath::parent(&self.cwd.path).map(str::to_string) else {
            return Ok(());
        };
        let came_from = self.cwd.path.clone();
        match self.stack.pop() {
            Some((dir, cursor)) if dir == parent => {
                self.open(&dir)?;
                self.cursor = cursor.min(self.rows().saturating_sub(1));
            }
            _ => {
                self.stack.clear();
                self.open(&parent)?;
                if let Some(pos) = self.pager.seek(&self.archive, &came_from, true)? {
                    self.cursor = pos + self.has_up() as usize;
                }
            }
        }
        Ok(())
    }

    /// Apply `a`; `page` is the number of rows on the screen. False to quit.
    pub fn apply(&mut self, a: Action, page: usize) -> Result<bool> {
        if self.help {
            // Any key closes the help.
            self.help = false;
            return Ok(true);
        }
        let last = self.rows().saturating_sub(1);
        let page = page.max(1);
        match a {
            Action::Quit => return Ok(false),
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::Down => self.cursor = (self.cursor + 1).min(last),
            Action::PageUp => self.cursor = self.cursor.saturating_sub(page),
            Action::PageDown => self.cursor = (self.cursor + page).min(last),
            Action::Home => self.cursor = 0,
            Action::End => self.cursor = last,
            Action::Help => self.help = true,
            Action::Back => self.back()?,
            Action::Enter => match self.selected()? {
                None if self.rows() > 0 => self.back()?,
                Some(c) if c.is_dir => {
                    self.stack.push((self.cwd.path.clone(), self.cursor));
                    self.open(&c.path)?;
                }
                _ => {}
            },
            Action::Sort(s) => {
                let selected = self.selected()?;
                if self.order.sort == s {
                    self.order.descending = !self.order.descending;
                } else {
                    self.order.sort = s;
                    self.order.descending = s != ChildSort::Name;
                }
                self.pager = Pager::new(
                    &self.archive,
                    &self.cwd.path,
                    child_count(&self.cwd),
                    self.order,
                    PAGE,
                )?;
                self.cursor = 0;
                if let Some(c) = selected {
                    if let Some(pos) = self.pager.seek(&self.archive, &c.path, c.is_dir)? {
                        self.cursor = pos + self.has_up() as usize;
                    }
                }
            }
        }
        Ok(true)
    }

    fn sort_name(&self) -> String {
        let what = match self.order.sort {
            ChildSort::Size => "size",
            ChildSort::Count => "count",
            ChildSort::Name => "name",
        };
        let way = if self.order.descending { "desc" } else { "asc" };
        format!("by {what} {way}")
    }

    /// The screen as rows of text, `width` × `height`.
    pub fn render(&mut self, width: usize, height: usize) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(height);
        if height == 0 || width == 0 {
            return Ok(out);
        }
        let shown = if self.cwd.path.is_empty() {
            "/".to_string()
        } else {
            format!("/{}", self.cwd.path)
        };
        let head = format!("--- {}: {} ", printable(&self.name), printable(&shown));
        let dashes = width.saturating_sub(head.chars().count());
        out.push(Row::with(
            fit(&format!("{head}{}", "-".repeat(dashes)), width),
            Look::Bold,
        ));
        if height == 1 {
            return Ok(out);
        }
        out.push(Row::with(
            fit(
                &format!(
                    "{:>SIZE_W$}{:>COUNT_W$}{}Name",
                    "Size",
                    "Files",
                    " ".repeat(NAME_AT - SIZE_W - COUNT_W)
                ),
                width,
            ),
            Look::Dim,
        ));
        let visible = height.saturating_sub(3);
        let rows = self.rows();
        self.cursor = self.cursor.min(rows.saturating_sub(1));
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if visible > 0 && self.cursor >= self.scroll + visible {
            self.scroll = self.cursor + 1 - visible;
        }
        let total = self.cwd.size_tree;
        let up = self.has_up() as usize;
        for r in self.scroll..(self.scroll + visible).min(rows) {
            let look = if r == self.cursor {
                Look::Reverse
            } else {
                Look::Plain
            };
            let text = if r < up {
                format!("{}/..", " ".repeat(NAME_AT))
            } else {
                match self.pager.get(&self.archive, r - up)? {
                    Some(c) => {
                        let name = printable(mpath::basename(&c.path));
                        format!(
                            "{}{}{}  {}{}",
                            fit(&format_size(c.size), SIZE_W),
                            fit(&format_count(c.count), COUNT_W),
                            bar(c.size, total),
                            if c.is_dir { "/" } else { "  " },
                            name
                        )
                    }
                    None => String::new(),
                }
            };
            let look = match (look, r >= up && self.is_dir_row(r - up)) {
                (Look::Reverse, true) => Look::ReverseBold,
                (Look::Plain, true) => Look::Bold,
                (l, _) => l,
            };
            out.push(Row::with(fit(&text, width), look));
        }
        while out.len() + 1 < height {
            out.push(Row::plain(""));
        }
        let foot = format!(
            " Total: {} | {} files | {} items | {} | ?:help q:quit",
            format_size(total).trim_start(),
            self.cwd.num_files_tree,
            self.pager.len(),
            self.sort_name()
        );
        out.push(Row::with(fit(&foot, width), Look::Reverse));
        Ok(out)
    }

    fn is_dir_row(&mut self, i: usize) -> bool {
        let (start, len) = self.pager.window();
        if i < start || i >= start + len {
            return false;
        }
        matches!(self.pager.get(&self.archive, i), Ok(Some(c)) if c.is_dir)
    }
}

/// Run the ncdu screen on the terminal until the user quits.
pub fn run(archive: Archive, name: &str, start: &str) -> Result<()> {
    let mut model = Ncdu::new(archive, name, start)?;
    let mut screen = Screen::open().map_err(|e| Error::io("<terminal>", e))?;
    let term = |e: std::io::Error| Error::io("<terminal>", e);
    loop {
        let (w, h) = screen.size().map_err(term)?;
        let rows = model.render(w as usize, h as usize)?;
        let help: Vec<String> = HELP.iter().map(|s| s.to_string()).collect();
        screen
            .draw(&rows, model.help.then_some(&help[..]))
            .map_err(term)?;
        match screen.next_input().map_err(term)? {
            Input::Quit => return Ok(()),
            Input::Redraw => {}
            Input::Key(k) => {
                if model.help {
                    model.help = false;
                    if k == Key::Interrupt {
                        return Ok(());
                    }
                    continue;
                }
                if let Some(a) = action(k) {
                    let page = (h as usize).saturating_sub(3);
                    if !model.apply(a, page)? {
                        return Ok(());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_look_like_python() {
        assert_eq!(format_size(0), "    0 B");
        assert_eq!(format_size(1023), " 1023 B");
        assert_eq!(format_size(1536), "  1.5 KiB");
        assert_eq!(format_size(1024 * 1024 * 1000), "  1.0 GiB");
        assert_eq!(format_count(0), "      ");
        assert_eq!(format_count(999), "   999");
        assert_eq!(format_count(12345), " 12.3K");
        assert_eq!(format_count(2_500_000), "  2.5M");
        assert_eq!(
            bar(5, 10),
            format!("[{}{}]", "#".repeat(10), " ".repeat(10))
        );
        assert_eq!(bar(50, 10), format!("[{}]", "#".repeat(20)));
        assert_eq!(bar(1, 0), format!("[{}]", " ".repeat(20)));
    }

    #[test]
    fn keys() {
        assert_eq!(action(Key::Char('j')), Some(Action::Down));
        assert_eq!(action(Key::Backspace), Some(Action::Back));
        assert_eq!(action(Key::Interrupt), Some(Action::Quit));
        assert_eq!(action(Key::Char('x')), None);
    }
}
