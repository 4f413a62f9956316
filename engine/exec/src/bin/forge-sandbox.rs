//! The persistent sandbox worker that forge's executor starts inside bubblewrap (see
//! `forge_exec`'s `worker_sandbox` module); for binaries other than `forge`, which serves
//! as its own worker (`forge __sandbox-worker`).

fn main() {
    forge_exec::sandbox_worker_main()
}
