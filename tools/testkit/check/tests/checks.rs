//! testkit-check run as the shell tests run it, on the inputs of tests/data/: real job logs
//! of `//deploy:slurm_jobs` (aurora_pair's `status`, mobilenet_2fpga's `infer`; temporary
//! paths shortened to /tmp/out) and hand-made breakages of them (rank 1's report cut out, a
//! lost word and an error line added, the link line's overflow set to 5 or the line removed),
//! Open MPI 4.1's map as rmaps_base_display_map prints it, aurora_pair's topology.json as
//! deploy-tool wrote it and hand-written ones (a broken one among them), and bench CSVs. Each answer (stdout, stderr, exit code) is
//! compared with what was worked out by hand from those files.

use std::net::TcpListener;
use std::process::Command;

/// (exit code, stdout, stderr) of `testkit-check ARGS...`, run from the crate's directory.
fn check(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_testkit-check"))
        .args(args)
        .output()
        .expect("testkit-check runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok(args: &[&str], stdout: &str) {
    let stdout = if stdout.is_empty() {
        String::new()
    } else {
        format!("{stdout}\n")
    };
    assert_eq!(check(args), (0, stdout, String::new()), "{args:?}");
}

fn fails(args: &[&str], code: i32, stderr: &str) {
    assert_eq!(
        check(args),
        (code, String::new(), format!("{stderr}\n")),
        "{args:?}"
    );
}

const PAIR: &str = "tests/data/pair.topology.json";
const REPLICAS: &str = "tests/data/replicas.topology.json";

#[test]
fn topology_fields() {
    ok(&["topology", "devices", PAIR], "2");
    ok(&["topology", "links", PAIR], "2");
    ok(&["topology", "nodes", PAIR], "1");
    ok(&["topology", "app", PAIR], "AuroraBench");
    ok(&["topology", "app", REPLICAS], "Finn");
    // copy 1 goes in on fpga0 and out on fpga1; copies 0 and 2 stay on one card
    ok(&["topology", "cut-copies", REPLICAS], "1");
}

#[test]
fn topology_refusals() {
    // the closing bracket of "devices" is missing: after the comma of line 6, "format" is
    // taken as a third device and the colon at line 7, column 11 ends it
    fails(
        &["topology", "devices", "tests/data/broken.topology.json"],
        2,
        "testkit-check: tests/data/broken.topology.json:7:11: not JSON (expected `,` or `]` at \
         line 7 column 11); a topology.json as deploy-tool writes it is expected",
    );
    fails(
        &["topology", "nodes", "tests/data/other_format.topology.json"],
        2,
        "testkit-check: tests/data/other_format.topology.json: format \"auroraforge-topology/0\", \
         want \"auroraforge-topology/1\": not a topology.json deploy-tool wrote (rebuild the \
         deployment, or pass its [topology] output)",
    );
    fails(
        &["topology", "cut-copies", PAIR],
        2,
        "testkit-check: tests/data/pair.topology.json: no \"replicas\": {\"copies\": [...]} (a \
         replica deployment) in this topology.json",
    );
    fails(
        &["topology", "cables", PAIR],
        2,
        "testkit-check: topology: no field \"cables\"; give one of devices|links|nodes|app|cut-copies",
    );
    let (code, _, err) = check(&["topology", "devices", "tests/data/absent.json"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("testkit-check: cannot read tests/data/absent.json: "),
        "{err}"
    );
}

#[test]
fn status_job_passes() {
    ok(
        &["job-status", "tests/data/status.job.out", "2", "2"],
        "2 of 2 rank(s) reported, 4 link ends up, no overflow, no error",
    );
    // a three-rank job's log without rank 2
    fails(
        &["job-status", "tests/data/status.job.out", "3", "2"],
        1,
        "testkit-check: tests/data/status.job.out: rank 2 printed no report (no '== <device> \
         (rank 2, ...' line)",
    );
    // the same log against a topology with one link more: 4 ends up, 6 wanted
    fails(
        &["job-status", "tests/data/status.job.out", "2", "3"],
        1,
        "testkit-check: tests/data/status.job.out: 4 link end(s) report CORE_STATUS 0x11ff, \
         want 6 (3 link(s), two ends each)",
    );
}

#[test]
fn status_job_missing_a_rank() {
    fails(
        &["job-status", "tests/data/missing_rank.job.out", "2", "2"],
        1,
        "testkit-check: tests/data/missing_rank.job.out: rank 1 printed no report (no '== <device> \
         (rank 1, ...' line)\n\
         testkit-check: tests/data/missing_rank.job.out: 2 link end(s) report CORE_STATUS 0x11ff, \
         want 4 (2 link(s), two ends each)",
    );
}

#[test]
fn status_job_with_loss_and_an_error() {
    fails(
        &["job-status", "tests/data/overflow.job.out", "2", "2"],
        1,
        "testkit-check: tests/data/overflow.job.out:45: lost words: FIFO_RX_OVERFLOW_COUNT   3\n\
         testkit-check: tests/data/overflow.job.out:137: an error: aurora-host: rank 1: error: \
         rank 1: loading /tmp/out/fpga1.truncated.xclbin: the file ends inside its header",
    );
}

#[test]
fn infer_job_links() {
    ok(
        &["job-links", "tests/data/infer.job.out"],
        "1 link(s), overflow 0 on each, no error",
    );
    fails(
        &["job-links", "tests/data/infer_lost.job.out"],
        1,
        "testkit-check: tests/data/infer_lost.job.out:12: lost words: link fpga0:1->fpga1:0: TX \
         6272 beats, RX 6272 beats, XOFF 7, XON 7, max in flight 124, overflow 5",
    );
    fails(
        &["job-links", "tests/data/infer_nolinks.job.out"],
        1,
        "testkit-check: tests/data/infer_nolinks.job.out: no 'link ...: ..., overflow N' line: \
         the run printed no link counters",
    );
}

#[test]
fn job_nodes_and_mpi_map() {
    ok(&["job-nodes", "tests/data/mpi_map.job.out"], "n[01-02]");
    ok(&["job-nodes", "tests/data/infer.job.out"], "vm");
    ok(&["mpi-map", "tests/data/mpi_map.job.out"], "0 n01\n1 n02");
    fails(
        &["mpi-map", "tests/data/infer.job.out"],
        1,
        "testkit-check: tests/data/infer.job.out: no map of Open MPI (set \
         OMPI_MCA_rmaps_base_display_map=1 for the job)",
    );
    fails(
        &["job-nodes", PAIR],
        1,
        "testkit-check: tests/data/pair.topology.json: no 'job ID: N rank(s) on NODELIST: ...' \
         line (the job script's first line)",
    );
}

#[test]
fn bench_csv() {
    ok(
        &["csv-errors", "tests/data/bench.csv"],
        "4 rows, byte_errors 0 in every row",
    );
    ok(
        &[
            "csv-errors",
            "tests/data/bench.csv",
            "failed_transmissions",
            "byte_errors",
        ],
        "4 rows, failed_transmissions and byte_errors 0 in every row",
    );
    fails(
        &[
            "csv-errors",
            "tests/data/bench_errors.csv",
            "failed_transmissions",
            "byte_errors",
        ],
        1,
        "testkit-check: tests/data/bench_errors.csv:3: byte_errors 12, want 0\n\
         testkit-check: tests/data/bench_errors.csv:4: failed_transmissions 1, want 0",
    );
    fails(
        &["csv-errors", "tests/data/bench_empty.csv"],
        1,
        "testkit-check: tests/data/bench_empty.csv: no rows after the header",
    );
    fails(
        &["csv-errors", "tests/data/bench.csv", "byte_error"],
        2,
        "testkit-check: tests/data/bench.csv:1: no column \"byte_error\" in the header",
    );
    ok(&["csv-sum", "tests/data/bench.csv", "rx_count"], "4096");
    ok(&["csv-hosts", "tests/data/bench.csv"], "0 n01\n1 n02");
    ok(
        &["csv-hosts", "tests/data/bench_errors.csv"],
        "0 n01\n1 n01",
    );
}

#[test]
fn numbers() {
    // date +%s.%N pairs; the differences worked out by hand
    ok(
        &["elapsed", "1765090000.120000000", "1765090003.470000000"],
        "3.4",
    );
    ok(
        &[
            "elapsed",
            "1765090000.120000000",
            "1765090001.480000000",
            "2",
        ],
        "1.36",
    );
    ok(&["ratio", "1234", "100"], "12.3");
    ok(&["below", "1.99", "2.0"], "");
    fails(
        &["below", "2.00", "2.0"],
        1,
        "testkit-check: 2.00 is not below 2.0",
    );
    fails(
        &["elapsed", "", "3"],
        2,
        "testkit-check: T0: \"\" is not a number",
    );
    fails(&["ratio", "1", "0"], 2, "testkit-check: ratio: B is 0");
}

#[test]
fn free_port_is_free() {
    let (code, out, err) = check(&["free-port"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let port: u16 = out.trim().parse().expect("a port number");
    assert!(port > 0);
    // free: this process can listen on it (the kernel gave it out, nothing took it since)
    TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
}

#[test]
fn wrong_command_line() {
    let (code, out, err) = check(&["topology", "devices"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with(
            "testkit-check: wrong command line: topology devices\nusage: testkit-check"
        ),
        "{err}"
    );
}
