fn main() {
    std::process::exit(forge::cli::main());
}
