fn main() -> std::process::ExitCode {
    barecat::main("barecat-index-to-csv")
}
