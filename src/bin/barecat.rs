fn main() -> std::process::ExitCode {
    barecat::cli::main_multicall()
}
