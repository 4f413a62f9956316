fn main() {
    // `forge __sandbox-worker ...` is the persistent sandbox the executor starts.
    forge_exec::sandbox_worker_entry_point();
    std::process::exit(forge::cli::main());
}
