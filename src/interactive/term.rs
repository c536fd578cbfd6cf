//! The terminal of the full-screen programs: raw mode and the alternate screen
//! while they run, and the terminal given back as it was on every way out.
//!
//! [`Screen::open`] switches the terminal; dropping the [`Screen`] switches it
//! back, so a normal quit, an error (a damaged archive found while browsing) and a
//! panic (the unwinding drops it, and a panic hook restores the terminal before the
//! panic message is printed) all leave a usable terminal. Ctrl-C reaches the
//! program as a key in raw mode and quits it the same way; SIGTERM, SIGHUP and
//! SIGQUIT are caught while the screen is open and end the program by the same
//! path.

use std::io::{self, IsTerminal, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::Duration;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Terminal;

/// Is the terminal in raw mode and on the alternate screen (for the panic hook)?
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// A terminating signal arrived.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Why a full-screen program cannot start.
pub fn not_a_terminal() -> Option<&'static str> {
    if !io::stdout().is_terminal() {
        Some("standard output is not a terminal")
    } else if !io::stdin().is_terminal() {
        Some("standard input is not a terminal")
    } else {
        None
    }
}

fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

fn install_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: the handler only stores to an atomic, which is async-signal
            // safe; the event loop notices it within one poll interval.
            unsafe {
                libc::signal(sig, on_signal as *const () as libc::sighandler_t);
            }
        }
    });
}

/// One line of the screen: text with a style for the whole line, or spans.
pub struct Row {
    /// The pieces of the line, left to right, each with its look.
    pub spans: Vec<(String, Look)>,
}

/// How a piece of text looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Normal text.
    Plain,
    /// Bold text: names of directories, headings.
    Bold,
    /// Dimmed text: secondary details.
    Dim,
    /// Selected row, header and footer bars.
    Reverse,
    /// Reverse video and bold: the selected row when it needs emphasis.
    ReverseBold,
}

impl Look {
    fn style(self) -> Style {
        match self {
            Look::Plain => Style::default(),
            Look::Bold => Style::default().add_modifier(Modifier::BOLD),
            Look::Dim => Style::default().add_modifier(Modifier::DIM),
            Look::Reverse => Style::default().add_modifier(Modifier::REVERSED),
            Look::ReverseBold => Style::default()
                .add_modifier(Modifier::REVERSED)
                .add_modifier(Modifier::BOLD),
        }
    }
}

impl Row {
    /// A line of plain text.
    pub fn plain(text: impl Into<String>) -> Row {
        Row {
            spans: vec![(text.into(), Look::Plain)],
        }
    }

    /// A line of text in one look.
    pub fn with(text: impl Into<String>, look: Look) -> Row {
        Row {
            spans: vec![(text.into(), look)],
        }
    }

    /// The text of the row (for tests).
    pub fn text(&self) -> String {
        self.spans.iter().map(|(t, _)| t.as_str()).collect()
    }
}

/// Cut `s` to at most `width` characters, or pad it with spaces to `width`.
pub fn fit(s: &str, width: usize) -> String {
    let mut out: String = s.chars().take(width).collect();
    let n = out.chars().count();
    out.extend(std::iter::repeat_n(' ', width - n));
    out
}

/// A name made safe to draw: control characters become `?`.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// A key the programs react to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Enter (Return).
    Enter,
    /// Backspace.
    Backspace,
    /// Tab.
    Tab,
    /// Home.
    Home,
    /// End.
    End,
    /// Page Up (or Ctrl-B).
    PageUp,
    /// Page Down (or Ctrl-F).
    PageDown,
    /// Escape.
    Esc,
    /// Ctrl-C.
    Interrupt,
}

fn key_of(k: KeyEvent) -> Option<Key> {
    if k.kind == KeyEventKind::Release {
        return None;
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) {
        return match k.code {
            KeyCode::Char('c') | KeyCode::Char('d') => Some(Key::Interrupt),
            KeyCode::Char('f') => Some(Key::PageDown),
            KeyCode::Char('b') => Some(Key::PageUp),
            _ => None,
        };
    }
    Some(match k.code {
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Enter => Key::Enter,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Esc => Key::Esc,
        _ => return None,
    })
}

/// What the event loop hands a program.
pub enum Input {
    /// A key was pressed.
    Key(Key),
    /// The terminal was resized (or nothing happened for a while): draw again.
    Redraw,
    /// A terminating signal: quit.
    Quit,
}

/// The terminal while a full-screen program runs.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    /// Switch to raw mode and the alternate screen.
    pub fn open() -> io::Result<Screen> {
        install_hooks();
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    /// Width and height.
    pub fn size(&self) -> io::Result<(u16, u16)> {
        let s = self.terminal.size()?;
        Ok((s.width, s.height))
    }

    /// Draw `rows` from the top, and `overlay` (a box of lines) in the middle.
    pub fn draw(&mut self, rows: &[Row], overlay: Option<&[String]>) -> io::Result<()> {
        self.terminal.draw(|f| {
            let area = f.area();
            let lines: Vec<Line> = rows
                .iter()
                .take(area.height as usize)
                .map(|r| {
                    Line::from(
                        r.spans
                            .iter()
                            .map(|(t, l)| Span::styled(t.clone(), l.style()))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            f.render_widget(Paragraph::new(lines), area);
            if let Some(text) = overlay {
                let w = text
                    .iter()
                    .map(|l| l.chars().count())
                    .max()
                    .unwrap_or(0)
                    .min(area.width as usize) as u16;
                let h = (text.len() as u16).min(area.height);
                let x = area.x + (area.width - w) / 2;
                let y = area.y + (area.height - h) / 2;
                let r = ratatui::layout::Rect::new(x, y, w, h);
                f.render_widget(Clear, r);
                let lines: Vec<Line> = text
                    .iter()
                    .map(|l| Line::from(Span::styled(fit(l, w as usize), Look::Reverse.style())))
                    .collect();
                f.render_widget(Paragraph::new(lines), r);
            }
        })?;
        Ok(())
    }

    /// Wait for the next key (or a resize, or a signal).
    pub fn next_input(&mut self) -> io::Result<Input> {
        loop {
            if SIGNALLED.load(Ordering::SeqCst) {
                return Ok(Input::Quit);
            }
            if !event::poll(Duration::from_millis(200))? {
                continue;
            }
            match event::read()? {
                Event::Key(k) => {
                    if let Some(key) = key_of(k) {
                        return Ok(Input::Key(key));
                    }
                }
                Event::Resize(_, _) => {
                    let _ = self.terminal.autoresize();
                    return Ok(Input::Redraw);
                }
                _ => {}
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_and_pads() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 3), "abc");
        assert_eq!(fit("", 0), "");
        assert_eq!(printable("a\nb\x1b"), "a?b?");
    }
}
