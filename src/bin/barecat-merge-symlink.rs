//! The `barecat-merge-symlink` program. It only names itself: parsing the
//! arguments and the work are in the library (`barecat::main`, src/cli/).

fn main() -> std::process::ExitCode {
    barecat::main("barecat-merge-symlink")
}
