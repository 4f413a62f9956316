//! `forge build`, `forge run`, `forge test`: analysis, then the executor.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};

use super::{
    exit_code_for, report, ConsoleArg, RemoteCacheArg, Session, EXIT_TEST_FAILURE, EXIT_USER_ERROR,
};
use crate::analysis::execution_platform::{executor_config, ExecutorConfig};
use crate::analysis::Analyzer;
use crate::model::{ActionGraph, ArtifactRef, ProvidersLabel, TargetOutputs};
use forge_exec::{BuildFailed, CachePolicy, ConsoleMode, ExecOptions, Executor, RemoteMode};

const NO_OUTPUTS_HELP: &str = "This means the rule did not define any outputs. See \
https://buck2.build/docs/users/faq/common_issues/#why-does-my-target-not-have-any-outputs for more information";

/// The execution platform's cache settings: those of `[build] execution_platforms`, or
/// buck2's local-only platform when the project names none.
fn executor_config_of(s: &Session, analyzer: &Analyzer) -> Result<ExecutorConfig> {
    let ws = s.loader.workspace();
    let config = match ws.config("build", "execution_platforms") {
        None => ExecutorConfig::default(),
        Some(v) => {
            let first = v
                .split(|c: char| c == ',' || c.is_whitespace())
                .find(|x| !x.is_empty())
                .unwrap_or_default()
                .to_owned();
            let label = s
                .loader
                .resolve_patterns(&[first], "")
                .context("In `[build] execution_platforms`")?
                .into_iter()
                .next()
                .ok_or_else(|| anyhow!("`[build] execution_platforms` names no target"))?;
            executor_config(analyzer, &label)?
        }
    };
    Ok(config)
}

/// The remote cache to use and its mode; `errors` counts a server found unreachable here.
fn remote_cache(
    s: &Session,
    policy: &CachePolicy,
    errors: &mut usize,
) -> Result<(Option<Arc<dyn forge_reapi::RemoteCache>>, RemoteMode)> {
    let ws = s.loader.workspace();
    // A platform that neither reads nor uploads never talks to the server (as in buck2).
    if !policy.reads && !policy.uploads {
        return Ok((None, RemoteMode::Off));
    }
    let mode = match s.common.remote_cache {
        RemoteCacheArg::Off => return Ok((None, RemoteMode::Off)),
        RemoteCacheArg::Read => RemoteMode::Read,
        RemoteCacheArg::Readwrite => RemoteMode::ReadWrite,
    };
    if !ws.config.has_section("buck2_re_client") {
        return Ok((None, RemoteMode::Off));
    }
    let options = forge_reapi::ClientOptions {
        mode: match mode {
            RemoteMode::Read => forge_reapi::CacheMode::Read,
            _ => forge_reapi::CacheMode::ReadWrite,
        },
        ..Default::default()
    };
    match forge_reapi::from_buckconfig(&ws.config_section("buck2_re_client"), options) {
        Ok(Some(c)) => Ok((Some(c), mode)),
        Ok(None) => Ok((None, RemoteMode::Off)),
        Err(e) if forge_reapi::is_unavailable(&e) => {
            *errors += 1;
            eprintln!("warning: remote cache unavailable, building locally: {e:#}");
            Ok((None, RemoteMode::Off))
        }
        Err(e) => Err(e.context("Configuring the remote cache from [buck2_re_client]")),
    }
}

/// The executor, and how many remote cache errors its setup met.
fn executor(s: &Session, analyzer: &Analyzer) -> Result<(Executor, usize)> {
    let ws = s.loader.workspace();
    let mut opts = ExecOptions::new(ws.root.clone());
    opts.jobs = s.common.jobs.unwrap_or(0);
    let platform = executor_config_of(s, analyzer)?;
    opts.cache_policy = CachePolicy {
        reads: platform.remote_cache_enabled,
        uploads: platform.allow_cache_uploads,
        max_upload_bytes: platform.max_cache_upload_bytes,
    };
    opts.remote_exec = match platform.remote_enabled {
        true => Some(forge_exec::RemoteExecPolicy {
            local_enabled: platform.local_enabled,
            properties: platform.remote_execution_properties.clone(),
            queue_timeout: queue_timeout(ws)?,
        }),
        false => None,
    };
    let mut remote_errors = 0;
    let (remote, mode) = remote_cache(s, &opts.cache_policy, &mut remote_errors)?;
    opts.remote = remote;
    opts.remote_mode = mode;
    opts.default_allow_cache_upload = ws
        .config("buck2", "default_allow_cache_upload")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    opts.sandbox_passthrough = ws
        .config("forge", "sandbox_passthrough")
        .map(|v| v.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(v) = ws.config("forge", "sandbox") {
        opts.sandbox = forge_exec::SandboxMode::parse(&v)
            .context("in `.buckconfig` (or `-c forge.sandbox=...`)")?;
    }
    opts.console = match s.common.console {
        ConsoleArg::Auto => ConsoleMode::Auto,
        ConsoleArg::Simple => ConsoleMode::Plain,
        ConsoleArg::Super => ConsoleMode::Fancy,
        ConsoleArg::None => ConsoleMode::Quiet,
    };
    Ok((Executor::new(opts)?, remote_errors))
}

/// buck2's `[build] remote_execution_cancel_on_estimated_queue_time_exceeds_s`. buck2 compares
/// it with the engine's estimate of the queue time; REAPI has no such estimate, so forge
/// measures how long the action has waited for a worker.
fn queue_timeout(ws: &crate::interpreter::Workspace) -> Result<Option<std::time::Duration>> {
    const KEY: &str = "remote_execution_cancel_on_estimated_queue_time_exceeds_s";
    let Some(v) = ws.config("build", KEY) else {
        return Ok(None);
    };
    let secs: u32 = v
        .trim()
        .parse()
        .map_err(|_| anyhow!("[build] {KEY} = `{v}`: expected a whole number of seconds"))?;
    Ok(Some(std::time::Duration::from_secs(secs.into())))
}

fn unspecified(l: &ProvidersLabel) -> String {
    format!("{l} (<unspecified>)")
}

/// Loads and analyses every target of `patterns`.
pub(super) fn analyse(
    s: &Session,
    patterns: &[String],
) -> Result<(Analyzer, Vec<(ProvidersLabel, TargetOutputs)>)> {
    let labels = s.loader.resolve_patterns(patterns, &s.cwd_package)?;
    let roots: Vec<_> = labels.iter().map(|l| l.target.clone()).collect();
    crate::interpreter::checks::check_graph(&s.loader, &roots)?;
    let root = s.root().to_string_lossy().into_owned();
    let analyzer = Analyzer::with_source(s.loader.clone(), root);
    let mut out = Vec::new();
    for l in labels {
        let o = analyzer.outputs(&l)?;
        out.push((l, o));
    }
    Ok((analyzer, out))
}

/// Owners of every action `wanted` needs, transitively.
fn needed_owners(graph: &ActionGraph, wanted: &[ArtifactRef]) -> BTreeSet<String> {
    let mut owners = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<ArtifactRef> = wanted.to_vec();
    while let Some(a) = stack.pop() {
        if let Some(act) = graph.producer_of(&a) {
            if seen.insert(act.id) {
                owners.insert(act.owner.to_string());
                stack.extend(act.inputs.iter().cloned());
            }
        }
    }
    owners
}

pub(super) fn build(s: &Session, patterns: &[String], show_output: bool, out: Option<&str>) -> i32 {
    let (analyzer, targets) = match analyse(s, patterns) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("BUILD FAILED");
            report(&e);
            return exit_code_for(&e);
        }
    };
    let mut wanted: Vec<ArtifactRef> = Vec::new();
    for (l, o) in &targets {
        if o.default_outputs.is_empty() && o.other_outputs.is_empty() {
            eprintln!(
                "Target {} does not have any outputs. {NO_OUTPUTS_HELP}",
                unspecified(l)
            );
        }
        wanted.extend(o.default_outputs.iter().cloned());
        wanted.extend(o.other_outputs.iter().cloned());
    }
    let graph = analyzer.action_graph();
    let (exec, setup_remote_errors) = match executor(s, &analyzer) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("BUILD FAILED");
            report(&e);
            return EXIT_USER_ERROR;
        }
    };
    let result = exec.build(&graph, &wanted);
    let failed_owners: BTreeSet<String> = match &result {
        Ok(_) => BTreeSet::new(),
        Err(e) => match e.downcast_ref::<BuildFailed>() {
            Some(f) => f.failures.iter().map(|x| x.owner.to_string()).collect(),
            None => BTreeSet::new(),
        },
    };
    // Targets whose outputs were all built; with a failure, those not depending on it.
    let mut lines: BTreeMap<String, String> = BTreeMap::new();
    let mut failed_targets = Vec::new();
    for (l, o) in &targets {
        let mut needs = o.default_outputs.clone();
        needs.extend(o.other_outputs.iter().cloned());
        let ok = match &result {
            Ok(_) => true,
            Err(_) if failed_owners.is_empty() => false,
            Err(_) => needed_owners(&graph, &needs).is_disjoint(&failed_owners),
        };
        if !ok {
            failed_targets.push(l.clone());
            continue;
        }
        match o.default_outputs.as_slice() {
            [] => {}
            [one] => {
                lines.insert(l.to_string(), one.path().to_owned());
            }
            _ => {
                lines.insert(l.to_string(), String::new());
            }
        }
    }
    if show_output {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for (l, p) in &lines {
            let _ = writeln!(out, "{l} {p}");
        }
    }
    match result {
        Ok(report) => {
            for line in report.summary_lines() {
                eprintln!("{line}");
            }
            let remote_errors = report.remote_errors + setup_remote_errors;
            if remote_errors > 0 {
                eprintln!("Remote cache errors: {remote_errors} (those actions ran locally)");
            }
            for line in report.not_shared_lines() {
                eprintln!("{line}");
            }
            eprintln!("BUILD SUCCEEDED");
            if let Some(out) = out {
                if let Err(e) = super::out::copy_out(s.root(), &s.cwd, &targets, out) {
                    super::report(&e);
                    return EXIT_USER_ERROR;
                }
            }
            0
        }
        Err(e) => {
            print_build_failure(&e, &failed_targets);
            EXIT_USER_ERROR
        }
    }
}

/// buck2's closing report of a failed build: the action failures again, `BUILD FAILED`, and
/// the targets that could not be built.
fn print_build_failure(e: &anyhow::Error, failed_targets: &[ProvidersLabel]) {
    match e.downcast_ref::<BuildFailed>() {
        Some(f) => {
            eprintln!("BUILD ERRORS ({})", f.failures.len());
            eprintln!("The following actions failed during the execution of this command:");
            for x in &f.failures {
                eprintln!("{}", x.message);
            }
            eprintln!("BUILD FAILED");
            for t in failed_targets {
                eprintln!("Failed to build '{}'", unspecified(t));
            }
        }
        None => {
            eprintln!("BUILD FAILED");
            report(e);
        }
    }
}

pub(super) fn run(s: &Session, target: &str, args: &[String]) -> i32 {
    let prepared = (|| -> Result<(Executor, forge_core::CommandSpec)> {
        let (analyzer, targets) = analyse(s, &[target.to_owned()])?;
        let (label, outputs) = targets
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("`{target}` matched no target"))?;
        let cmd = outputs.run.ok_or_else(|| {
            anyhow!(
                "Target `{}` is not runnable: it does not return a `RunInfo` provider",
                unspecified(&label)
            )
        })?;
        let (exec, _) = executor(s, &analyzer)?;
        let graph = analyzer.action_graph();
        exec.build(&graph, &cmd.inputs)?;
        Ok((exec, cmd))
    })();
    let (exec, cmd) = match prepared {
        Ok(x) => x,
        Err(e) => {
            print_build_failure(&e, &[]);
            return EXIT_USER_ERROR;
        }
    };
    let Some((program, rest)) = cmd.argv_absolute.split_first() else {
        eprintln!("RunInfo of `{target}` has an empty command line");
        return EXIT_USER_ERROR;
    };
    eprintln!("BUILD SUCCEEDED - starting your binary");
    let mut command = std::process::Command::new(program);
    command.args(rest).args(args).current_dir(&s.cwd);
    command.envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    command.env("BUCK_RUN_BUILD_ID", exec.build_id());
    match command.status() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(1))
        }
        Err(e) => {
            eprintln!("Failed to start `{program}`: {e}");
            EXIT_USER_ERROR
        }
    }
}

pub(super) fn test(
    s: &Session,
    patterns: &[String],
    timeout: Option<&str>,
    labels: &super::test_labels::LabelFilter,
) -> i32 {
    let timeout =
        match super::test_timeout::resolve(timeout, s.loader.workspace().config("test", "timeout"))
        {
            Ok(t) => t,
            Err(e) => {
                report(&e);
                return EXIT_USER_ERROR;
            }
        };
    let (analyzer, targets) = match analyse(s, patterns) {
        Ok(x) => x,
        Err(e) => {
            report(&e);
            eprintln!("Build failure 1");
            eprintln!("NO TESTS RAN");
            return exit_code_for(&e);
        }
    };
    let tests: Vec<_> = targets
        .into_iter()
        .filter_map(|(_, o)| o.test)
        .filter(|t| !labels.excludes(&t.labels))
        .collect();
    let mut exec = match executor(s, &analyzer) {
        Ok((e, _)) => e,
        Err(e) => {
            report(&e);
            return EXIT_USER_ERROR;
        }
    };
    exec.set_test_timeout(timeout);
    let graph = analyzer.action_graph();
    match forge_exec::run_tests(&exec, &graph, tests) {
        Ok(summary) if summary.build_failures > 0 && summary.passed + summary.failed == 0 => {
            EXIT_USER_ERROR
        }
        Ok(summary) if summary.failed_total() > 0 => EXIT_TEST_FAILURE,
        Ok(_) => 0,
        Err(e) => {
            report(&e);
            EXIT_USER_ERROR
        }
    }
}
