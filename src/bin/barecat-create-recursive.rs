fn main() -> std::process::ExitCode {
    barecat::main("barecat-create-recursive")
}
