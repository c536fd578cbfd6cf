fn main() -> std::process::ExitCode {
    barecat::cli::main_for(barecat::cli::find::run)
}
