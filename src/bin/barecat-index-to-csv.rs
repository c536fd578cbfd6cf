fn main() -> std::process::ExitCode {
    barecat::cli::main_for(barecat::cli::index_to_csv::run)
}
