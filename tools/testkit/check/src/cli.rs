//! The command line: one subcommand and its arguments to the function that does it.

use crate::{csv, job_log, numbers, port, topology, Error};

/// The usage text, printed with any wrong command line.
pub const USAGE: &str = "usage: testkit-check SUBCOMMAND ARGS...
  topology devices|links|nodes|app|cut-copies FILE   a field of a deployment's topology.json
  csv-errors FILE [COLUMN...]     every row of a bench CSV has 0 in COLUMN (default byte_errors)
  csv-sum FILE COLUMN             the sum of an integer column
  csv-hosts FILE                  `RANK HOST...` per rank (the hostname column)
  job-status LOG RANKS LINKS      a status job: every rank reported, 2 x LINKS ends up, no loss
  job-links LOG                   an infer job: link lines, each overflow 0, no error
  job-nodes LOG                   the job's NODELIST (from `job ID: N rank(s) on NODELIST: ...`)
  mpi-map LOG                     Open MPI's map: `RANK NODE` per rank
  elapsed T0 T1 [DIGITS]          T1 - T0 (default 1 decimal)
  ratio A B [DIGITS]              A / B
  below X LIMIT                   exit 0 when X < LIMIT
  free-port                       a TCP port free on 127.0.0.1
exit: 0 ok (result on stdout), 1 a check failed, 2 unreadable input or a wrong command line";

/// Runs the subcommand `args` names (without the program name).
pub fn run(args: &[String]) -> Result<String, Error> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["topology", field, file] => topology::field(field, file),
        ["csv-errors", file, ..] => csv::errors(file, &args[2..]),
        ["csv-sum", file, column] => csv::sum(file, column),
        ["csv-hosts", file] => csv::hosts(file),
        ["job-status", log, ranks, links] => job_log::status(log, ranks, links),
        ["job-links", log] => job_log::links(log),
        ["job-nodes", log] => job_log::nodes(log),
        ["mpi-map", log] => job_log::mpi_map(log),
        ["elapsed", t0, t1] => numbers::elapsed(t0, t1, None),
        ["elapsed", t0, t1, _] => numbers::elapsed(t0, t1, args.get(3)),
        ["ratio", x, y] => numbers::ratio(x, y, None),
        ["ratio", x, y, _] => numbers::ratio(x, y, args.get(3)),
        ["below", x, limit] => numbers::below(x, limit),
        ["free-port"] => port::free(),
        _ => Err(Error::Bad(format!(
            "wrong command line: {}\n{USAGE}",
            a.join(" ")
        ))),
    }
}
