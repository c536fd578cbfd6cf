//! The command-line programs as such: options shared by every command, the reading
//! commands and the multicall `barecat`, Python barecat's spellings and legacy programs, editing in place, the interactive
//! shell, ncdu and browse in a real terminal (tmux).

mod compat_aliases;
mod consistency;
mod edit;
mod python_compat;
mod read;
mod tui;
