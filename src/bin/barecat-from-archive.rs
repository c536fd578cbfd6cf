fn main() -> std::process::ExitCode {
    barecat::main("barecat-from-archive")
}
