fn main() -> std::process::ExitCode {
    barecat::main("archive2barecat")
}
