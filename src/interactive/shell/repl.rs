//! The shell's interactive loop: lines read with rustyline (editing, a history
//! kept in `~/.barecat_shell_history`, Tab completion of command names and of
//! archive paths from the index), each run by [`Shell::run_line`]. Ctrl-C drops
//! the line being typed; Ctrl-D (end of input), `quit` or `exit` leave.

use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use super::{Io, Shell, Status};
use crate::core::error::{Error, Result};

/// The greeting of an interactive session (Python's).
pub const INTRO: &str = "Barecat shell. Type help or ? for commands, .quit to exit.";

struct Completion {
    shell: Rc<RefCell<Shell>>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.shell.borrow().complete(line, pos))
    }
}

impl Hinter for Completion {
    type Hint = String;
}
impl Highlighter for Completion {}
impl Validator for Completion {}
impl Helper for Completion {}

fn history_file() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".barecat_shell_history"))
}

fn term(e: ReadlineError) -> Error {
    match e {
        ReadlineError::Io(e) => Error::io("<terminal>", e),
        other => Error::io("<terminal>", std::io::Error::other(other.to_string())),
    }
}

/// Read and run lines until the user leaves.
pub fn run(shell: Shell) -> Result<()> {
    let shell = Rc::new(RefCell::new(shell));
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .auto_add_history(true)
        .build();
    let mut rl: Editor<Completion, DefaultHistory> = Editor::with_config(config).map_err(term)?;
    rl.set_helper(Some(Completion {
        shell: shell.clone(),
    }));
    let history = history_file();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("{INTRO}");
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    loop {
        let prompt = shell.borrow().prompt();
        let line = match rl.readline(&prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => {
                println!("^C");
                continue;
            }
            Err(ReadlineError::Eof) => {
                println!();
                break;
            }
            Err(e) => return Err(term(e)),
        };
        let (mut out, mut err) = (stdout.lock(), stderr.lock());
        let status = shell.borrow_mut().run_line(
            &line,
            &mut Io {
                out: &mut out,
                err: &mut err,
            },
        )?;
        out.flush().map_err(|e| Error::io("<output>", e))?;
        if status == Status::Quit {
            break;
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}
