//! The deployment graph caches per device: `//deploy:tiny_2fpga` (the tiny FINN network over
//! two cards in a chain) built in a scratch copy of this project by the `forge` binary.
//!
//! - a folding change of a layer on fpga1 re-runs fpga1's chain only: fpga0's link config and
//!   xclbin stay cached (`forge log what-ran`) and its bitstream keeps its bytes;
//! - an AuroraFlow parameter change rebuilds the two link kernels and the links using them,
//!   nothing of FINN, the partition or the other kernels;
//! - two copies sharing one BuildGrid: the second takes every action of the deployment's
//!   targets from the remote cache, none runs locally;
//! - reproducible across checkouts, and `forge clean` between two builds with BuildGrid as the
//!   remote cache: the suite's one build of the deployment from an empty action cache, in a
//!   copy at another path, umask, time zone, locale and user (`tools/checks/repro_check.sh`),
//!   gives byte-identical outputs to the project's build and uploads every command the rules
//!   let the cache share; after `forge clean` the next build there takes each of them from
//!   BuildGrid (whose ActionCache holds them, under the same keys) and runs only the version
//!   probes again.
//!
//! Each copy is the project's source tree with its Python environments and cargo target dir
//! linked in, and (but for the empty-cache copy) its local cache seeded by hard links from the
//! project's own cache, which `./forge test //deploy:caching` has just filled with this
//! deployment (the test target's data); so a copy's first build runs nothing, and what a
//! change re-runs is exactly what the change reaches. Run as `./forge test //deploy:caching`,
//! which names the engine under test in `FORGE` (`//engine/forge:forge`).

use forge_testkit as bgd;

use std::path::Path;
use std::process::{Command, Stdio};

const TARGET: &str = "//deploy:tiny_2fpga";
const DEPLOY_ART: &str = "buck-out/forge/art/root/1ef78538d8598cb2/deploy";

/// One line of `forge log what-ran`: `<executor> <seconds>s  <action name>`.
#[derive(Debug, Clone)]
struct Ran {
    executor: String,
    name: String,
}

impl Ran {
    /// The configured target that owns the action (`root//pkg:name`).
    fn owner(&self) -> &str {
        self.name.split(" (").next().unwrap_or("")
    }

    fn is(&self, owner: &str, category: &str) -> bool {
        self.owner() == format!("root{owner}")
            && (self.name.contains(&format!("({category} "))
                || self.name.ends_with(&format!("({category})")))
    }
}

/// The forge binary under test: `FORGE`, set by `//deploy:caching` from the engine it builds
/// (a project-relative path).
fn forge() -> std::path::PathBuf {
    let forge = std::env::var_os("FORGE").expect(
        "FORGE names no forge binary: run `./forge test //deploy:caching`, or set \
         FORGE=target/release/forge for `cargo test -p deploy_checks`",
    );
    bgd::workspace_root().join(forge)
}

/// `cmd` without this test's `CARGO_MANIFEST_DIR` (set as `cargo test` sets it): forge's
/// local actions inherit forge's environment, and the `ring` crate's build script reruns when
/// that variable changes (`rerun-if-env-changed`), so a copy's cargo actions would recompile
/// every crate above `ring` in the shared target dir, and the project's next build all of
/// them again.
fn nested(mut cmd: Command) -> Command {
    cmd.env_remove("CARGO_MANIFEST_DIR");
    cmd
}

/// A copy of the project to build in, at `root` inside `_dir` (removed with it).
struct Scratch {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

/// Top-level entries of the project that a copy does not get: build state, or linked in.
const NOT_COPIED: [&str; 5] = ["buck-out", "target", ".venv", ".node", ".git"];

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ty = e.file_type().unwrap();
        if ty.is_dir() {
            copy_tree(&src, &dst);
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else {
            copy_file(&src, &dst);
        }
    }
}

/// `from` copied with its modification time: the copy links in the project's cargo target
/// dir, and cargo takes a source newer than its last build as changed, so a fresh mtime
/// would make every cargo action of a copy's clean build recompile the crates it needs
/// (minutes on 2 cores) instead of finding them built, as `tools/checks/repro_check.sh`'s
/// copies (tar) do.
fn copy_file(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
    let modified = std::fs::metadata(from).unwrap().modified().unwrap();
    // futimens on a read-only descriptor: the copy keeps its source's (maybe read-only) mode
    std::fs::File::open(to)
        .unwrap()
        .set_modified(modified)
        .unwrap_or_else(|e| panic!("{}: {e}", to.display()));
}

/// `from` as hard links (the cache's blobs are read-only and replaced only by rename).
fn link_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            link_tree(&src, &dst);
        } else {
            std::fs::hard_link(&src, &dst).unwrap();
        }
    }
}

impl Scratch {
    fn new() -> Scratch {
        let project = bgd::workspace_root().canonicalize().unwrap();
        let dir = tempfile::Builder::new()
            .prefix("forge-deploy-caching-")
            .tempdir()
            .unwrap();
        let root = dir.path();
        for e in std::fs::read_dir(&project).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if NOT_COPIED.iter().any(|n| name == *n) {
                continue;
            }
            let dst = root.join(&name);
            if e.file_type().unwrap().is_dir() {
                copy_tree(&e.path(), &dst);
            } else {
                copy_file(&e.path(), &dst);
            }
        }
        for shared in [".venv", ".node", "target"] {
            std::os::unix::fs::symlink(project.join(shared), root.join(shared)).unwrap();
        }
        let cache = project.join("buck-out/forge/cache");
        for part in ["cas", "ac"] {
            assert!(
                cache.join(part).is_dir(),
                "{}: no local cache to seed the copy from; run `./forge test //deploy:caching`",
                cache.display()
            );
            link_tree(
                &cache.join(part),
                &root.join("buck-out/forge/cache").join(part),
            );
        }
        let root = dir.path().to_path_buf();
        Scratch { _dir: dir, root }
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn forge(&self, args: &[&str]) -> std::process::Output {
        nested(Command::new(forge()))
            .args(args)
            .current_dir(self.root())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Builds the deployment and returns what ran (`forge log what-ran`).
    fn build(&self, extra: &[&str]) -> Vec<Ran> {
        self.build_reporting(extra).0
    }

    /// Builds the deployment; what ran (`forge log what-ran`) and the build's stderr (its
    /// summary).
    fn build_reporting(&self, extra: &[&str]) -> (Vec<Ran>, String) {
        let mut args = vec!["build", TARGET];
        args.extend_from_slice(extra);
        let out = self.forge(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "forge build {TARGET} failed ({}) in {}:\n{stderr}",
            out.status,
            self.root().display(),
        );
        (self.what_ran(), stderr)
    }

    fn what_ran(&self) -> Vec<Ran> {
        let log = self.forge(&["log", "what-ran"]);
        assert!(
            log.status.success(),
            "{}",
            String::from_utf8_lossy(&log.stderr)
        );
        String::from_utf8(log.stdout)
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with(' '))
            .map(|l| {
                let (executor, rest) = l.split_once(' ').unwrap();
                let name = rest.trim_start().split_once("s  ").unwrap().1;
                Ran {
                    executor: executor.to_string(),
                    name: name.to_string(),
                }
            })
            .collect()
    }

    /// The last build's log (`buck-out/forge/log/last-build.json`).
    fn build_log(&self) -> serde_json::Value {
        let log = self.root().join("buck-out/forge/log/last-build.json");
        serde_json::from_str(&std::fs::read_to_string(log).unwrap()).unwrap()
    }

    /// Replaces `old` (which must occur once) by `new` in a project file, as a user would.
    fn edit(&self, rel: &str, old: &str, new: &str) {
        let path = self.root().join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.matches(old).count(),
            1,
            "{rel}: `{old}` not found once"
        );
        std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
    }

    fn art(&self, rel: &str) -> Vec<u8> {
        let p = self.root().join(DEPLOY_ART).join(rel);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// The action-cache keys of every action the last build recorded for `owner*` targets.
    fn keys_of(&self, owner_prefix: &str) -> Vec<String> {
        self.build_log()["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["name"].as_str().unwrap().starts_with(owner_prefix))
            .map(|a| a["key"].as_str().unwrap().to_string())
            .collect()
    }

    /// `forge clean`, as a user runs it.
    fn clean(&self) {
        let out = self.forge(&["clean"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Forgets the given local cache entries and every output: the next build has to get
    /// those actions from elsewhere.
    fn forget(&self, keys: &[String]) {
        let ac = self.root().join("buck-out/forge/cache/ac");
        for k in keys {
            let _ = std::fs::remove_file(ac.join(&k[..2]).join(k));
        }
        let _ = std::fs::remove_dir_all(self.root().join("buck-out/forge/art"));
    }
}

fn describe(ran: &[Ran]) -> String {
    ran.iter()
        .map(|r| format!("  {} {}", r.executor, r.name))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds once (everything comes from the seeded cache) and checks nothing ran.
fn warm(s: &Scratch) {
    let first = s.build(&[]);
    let local: Vec<&Ran> = first.iter().filter(|r| r.executor == "local").collect();
    assert!(
        local.is_empty(),
        "the seeded copy ran actions locally on its first build (is the project's cache \
         filled with {TARGET}?):\n{}",
        describe(&first)
    );
}

#[test]
fn folding_change_on_fpga1_reruns_fpga1_only() {
    let s = Scratch::new();
    warm(&s);
    let xclbin0 = s.art("__tiny_2fpga__fpga0__/fpga0.xclbin");
    let xclbin1 = s.art("__tiny_2fpga__fpga1__/fpga1.xclbin");
    let cfg0 = s.art("__tiny_2fpga__fpga0__/fpga0.cfg");
    // A folding config for the FINN flow, the way finn_steps takes one: MVAU_rtl_3, which the
    // partition plan places on fpga1, gets PE 2 instead of 4.
    std::fs::write(
        s.root().join("finn/tiny/folding.json"),
        "{\"MVAU_rtl_3\": {\"PE\": 2, \"SIMD\": 16}}\n",
    )
    .unwrap();
    s.edit(
        "finn/tiny/BUCK",
        "    model = \":model\",\n    steps = FRONT_END_STEPS,",
        "    folding = \"folding.json\",\n    model = \":model\",\n    steps = FRONT_END_STEPS,",
    );
    let ran = s.build(&[]);
    let all = describe(&ran);
    let plan: serde_json::Value =
        serde_json::from_slice(&s.art("__tiny_2fpga__partition__/plan.json")).unwrap();
    let device = plan["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "MVAU_rtl_3")
        .map(|l| l["device"].clone());
    assert_eq!(
        device,
        Some(serde_json::json!("fpga1")),
        "the plan no longer places MVAU_rtl_3 on fpga1; pick a layer of fpga1"
    );
    assert!(
        ran.iter()
            .any(|r| r.executor == "local"
                && r.is("//deploy:tiny_2fpga__partition", "finn_export_exec")),
        "the folding change did not reach the partition:\n{all}"
    );
    for category in ["link_config", "xclbin_pack"] {
        assert!(
            ran.iter()
                .any(|r| r.executor == "local" && r.is("//deploy:tiny_2fpga__fpga1", category)),
            "fpga1's {category} did not re-run:\n{all}"
        );
        let fpga0: Vec<&Ran> = ran
            .iter()
            .filter(|r| r.is("//deploy:tiny_2fpga__fpga0", category))
            .collect();
        assert!(
            fpga0.is_empty(),
            "fpga0's {category} ran although only fpga1's layers changed:\n{all}"
        );
    }
    assert_eq!(s.art("__tiny_2fpga__fpga0__/fpga0.xclbin"), xclbin0);
    assert_eq!(s.art("__tiny_2fpga__fpga0__/fpga0.cfg"), cfg0);
    assert_ne!(
        s.art("__tiny_2fpga__fpga1__/fpga1.xclbin"),
        xclbin1,
        "fpga1's bitstream does not carry the new folding"
    );
}

#[test]
fn auroraflow_parameter_rebuilds_links_only() {
    let s = Scratch::new();
    warm(&s);
    // Both link kernels' TX FIFO, 8 KiB (kernel.toml's default) -> 16 KiB, set on the default
    // board's targets (the per-board kernels below them name a `kernel_name`).
    s.edit(
        "hw/aurora_flow/BUCK",
        "        instance = port,\n        packaging = PACKAGING,\n",
        "        instance = port,\n        packaging = PACKAGING,\n        tx_fifo_size = 16384,\n",
    );
    let ran = s.build(&[]);
    let all = describe(&ran);
    let allowed = [
        "root//hw/aurora_flow:aurora_flow_0",
        "root//hw/aurora_flow:aurora_flow_1",
        "root//deploy:tiny_2fpga__fpga0",
        "root//deploy:tiny_2fpga__fpga1",
        "root//deploy:tiny_2fpga",
    ];
    for r in ran.iter().filter(|r| r.executor != "up-to-date") {
        assert!(
            allowed.contains(&r.owner()),
            "{} ran although it does not use the AuroraFlow kernels:\n{all}",
            r.name
        );
    }
    for (owner, category) in [
        ("//hw/aurora_flow:aurora_flow_0", "verilator_kernel_model"),
        ("//hw/aurora_flow:aurora_flow_1", "verilator_kernel_model"),
        ("//deploy:tiny_2fpga__fpga0", "link_config"),
        ("//deploy:tiny_2fpga__fpga1", "link_config"),
        ("//deploy:tiny_2fpga__fpga0", "xclbin_pack"),
        ("//deploy:tiny_2fpga__fpga1", "xclbin_pack"),
    ] {
        assert!(
            ran.iter()
                .any(|r| r.executor == "local" && r.is(owner, category)),
            "{owner} {category} did not re-run:\n{all}"
        );
    }
    // The new size reached the simulated device (the link kernel's parameters).
    let sim: serde_json::Value =
        serde_json::from_slice(&s.art("__tiny_2fpga__fpga0__/fpga0.sim.json")).unwrap();
    let sizes: Vec<i64> = sim["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["params"]["tx_fifo_size"].as_i64())
        .collect();
    assert_eq!(sizes, vec![16384], "fpga0's link kernel parameters: {sim}");
}

#[test]
fn second_copy_links_from_buildgrid() {
    let server = bgd::BuildGrid::start()
        .expect("this test needs BuildGrid; FORGE_ALLOW_MISSING must not name `buildgrid`");
    // The project's own `.buckconfig` uploads every action's result
    // (`default_allow_cache_upload`); the copies only name the server.
    let mut section = String::from("[buck2_re_client]\n");
    for (k, v) in server.section() {
        section.push_str(&format!("  {k} = {v}\n"));
    }
    let remote = ["-c", "ci.remote_cache=true"];
    let copies = [Scratch::new(), Scratch::new()];
    for c in &copies {
        std::fs::write(c.root().join(".buckconfig.local"), &section).unwrap();
    }
    // Neither copy may find the deployment's own actions in its local cache.
    warm(&copies[0]);
    let deployment: Vec<String> = copies[0].keys_of("root//deploy:tiny_2fpga");
    assert!(deployment.len() >= 6, "{deployment:?}");
    for c in &copies {
        c.forget(&deployment);
    }
    let first = copies[0].build(&remote);
    let uploaded: Vec<&Ran> = first
        .iter()
        .filter(|r| r.executor == "local" && r.owner().starts_with("root//deploy:tiny_2fpga"))
        .collect();
    assert!(
        uploaded.len() >= 6,
        "the first copy did not run the deployment's actions:\n{}",
        describe(&first)
    );

    let second = copies[1].build(&remote);
    let all = describe(&second);
    let mine: Vec<&Ran> = second
        .iter()
        .filter(|r| r.owner().starts_with("root//deploy:tiny_2fpga"))
        .collect();
    for r in &mine {
        assert!(
            r.executor == "remote" || r.executor == "in-process",
            "{} ran `{}` in the second copy, not from the remote cache:\n{all}",
            r.name,
            r.executor
        );
    }
    for d in ["fpga0", "fpga1"] {
        for category in ["link_config", "xclbin_pack"] {
            let owner = format!("//deploy:tiny_2fpga__{d}");
            assert!(
                mine.iter()
                    .any(|r| r.executor == "remote" && r.is(&owner, category)),
                "{owner} {category} was not a remote cache hit:\n{all}"
            );
        }
    }
    for rel in [
        "__tiny_2fpga__fpga0__/fpga0.xclbin",
        "__tiny_2fpga__fpga1__/fpga1.xclbin",
        "__tiny_2fpga__fpga0__/fpga0.cfg",
    ] {
        assert_eq!(copies[1].art(rel), copies[0].art(rel), "{rel}");
    }
}

/// One command of a build, from its log: how it ran, its remote cache key and its outputs.
#[derive(Debug, PartialEq)]
struct Command1 {
    executor: String,
    remote_key: String,
    outputs: Vec<(String, String)>,
}

/// The commands (run actions) of the last build by action name.
fn commands(s: &Scratch) -> std::collections::BTreeMap<String, Command1> {
    let log = s.build_log();
    let mut out = std::collections::BTreeMap::new();
    for a in log["actions"].as_array().unwrap() {
        if a["argv"].as_array().is_none_or(|v| v.is_empty()) {
            continue;
        }
        let name = a["name"].as_str().unwrap().to_string();
        let remote_key = a["remote_key"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no remote_key in the build log"))
            .to_string();
        let outputs = serde_json::from_value(a["output_digests"].clone()).unwrap_or_default();
        let executor = a["executor"].as_str().unwrap().to_string();
        out.insert(
            name,
            Command1 {
                executor,
                remote_key,
                outputs,
            },
        );
    }
    out
}

/// The build summary's `Not shared through the remote cache` list: (action, why).
fn not_shared(summary: &str) -> Vec<(String, String)> {
    summary
        .lines()
        .skip_while(|l| !l.starts_with("Not shared through the remote cache:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let (name, why) = l.trim_start().split_once("): ").unwrap();
            (format!("{name})"), why.to_string())
        })
        .collect()
}

/// What BuildGrid's own ActionCache holds for each key (buildgrid_ac.py, BuildGrid's client
/// library): key -> the outputs of its ActionResult as (path, sha256[ +x]), or None.
type AcOutputs = Option<Vec<(String, String)>>;

fn buildgrid_ac(
    server: &bgd::BuildGrid,
    keys: &[&str],
) -> std::collections::BTreeMap<String, AcOutputs> {
    use std::io::Write;
    let python = bgd::bgd().unwrap().with_file_name("python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/buildgrid_ac.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(format!("127.0.0.1:{}", server.port))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(keys.join("\n").as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{} failed", script.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let key = v["digest"].as_str().unwrap().to_string();
            let found = v["found"].as_bool().unwrap() && v["exit_code"] == 0;
            let outputs = found.then(|| {
                let mut o: Vec<(String, String)> = v["outputs"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(p, d)| (p.clone(), d.as_str().unwrap().to_string()))
                    .collect();
                o.sort();
                o
            });
            (key, outputs)
        })
        .collect()
}

/// Reproducible across checkouts, and `./forge clean` between two builds with the remote
/// cache: the suite's one build of the deployment from an empty action cache serves both.
///
/// `tools/checks/repro_check.sh --in-copies` builds the deployment in a copy seeded from the
/// project's cache (it runs nothing: that build's log is the reference), then in a second copy
/// at another path and depth, under umask 077, another time zone, locale and user, with an
/// empty action cache (every command runs), and compares the two logs with `forge log diff`:
/// every action's outputs must be byte-identical. With `--remote-cache` that second copy names
/// this test's BuildGrid, on the project's own configuration (no `default_allow_cache_upload`
/// of the test's), so its empty-cache build is also the guide's first build after
/// `./forge clean`: it uploads every command the rules let the cache share, which BuildGrid's
/// ActionCache then holds with the outputs the build logged. The summary names the commands
/// that may not be shared, and why: only the tool version probes (`local_only`,
/// `allow_cache_upload = False`: they identify this machine's tools). Then, in that copy,
/// `forge clean` and a second build take each shared command from BuildGrid under the same key
/// and run none of them locally. (Before, `//:reproducible` and this scenario each ran the
/// deployment's commands from an empty cache.)
#[test]
fn empty_cache_build_is_reproducible_and_shared_through_buildgrid() {
    let server = bgd::BuildGrid::start()
        .expect("this test needs BuildGrid; FORGE_ALLOW_MISSING must not name `buildgrid`");
    let mut section = String::from("[buck2_re_client]\n");
    for (k, v) in server.section() {
        section.push_str(&format!("  {k} = {v}\n"));
    }
    let work = tempfile::Builder::new()
        .prefix("forge-deploy-repro-")
        .tempdir()
        .unwrap();
    let config = work.path().join("remote.buckconfig");
    std::fs::write(&config, &section).unwrap();
    let copies = work.path().join("copies");
    let script = bgd::workspace_root().join("tools/checks/repro_check.sh");
    let out = nested(Command::new(&script))
        .arg("--in-copies")
        .arg("--work")
        .arg(&copies)
        .arg("--remote-cache")
        .arg(&config)
        .arg(TARGET)
        .current_dir(bgd::workspace_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // the copies stay for a look at what differs
        let kept = work.keep().join("copies");
        panic!(
            "{TARGET} is not reproducible across checkouts ({}: exit 1 when an output differs, \
             3 when a build failed; the copies are kept in {}):\n{}\n{stderr}",
            out.status,
            kept.display(),
            String::from_utf8_lossy(&out.stdout),
        );
    }
    // The second build's output: the script's line announcing it, then forge's.
    let second_build = stderr
        .split_once(&format!("repro_check: building {TARGET} again in"))
        .unwrap_or_else(|| panic!("repro_check.sh did not build a second copy:\n{stderr}"))
        .1;
    let s = Scratch {
        root: copies.join("second/checkout/one/level/deeper"),
        _dir: work,
    };
    let first = commands(&s);
    let named = not_shared(second_build);
    eprintln!("not shared through the remote cache:");
    for (name, why) in &named {
        eprintln!("  {name}: {why}");
        assert!(
            name.contains("(probe_tool_version") && why.contains("allow_cache_upload = False"),
            "{name} was not uploaded ({why}); only the version probes may stay local:\n{second_build}"
        );
    }
    let named: Vec<&String> = named.iter().map(|(n, _)| n).collect();
    let shared: Vec<(&String, &Command1)> = first
        .iter()
        .filter(|(n, c)| c.executor == "local" && !named.contains(n))
        .collect();
    assert!(
        first.values().all(|c| c.executor == "local") && shared.len() >= 40,
        "from an empty cache the build ran {} of {} commands locally:\n{second_build}",
        shared.len(),
        first.len()
    );
    for (name, c) in first.iter().filter(|(n, _)| named.contains(n)) {
        assert_eq!(c.executor, "local", "{name}");
    }
    let keys: Vec<&str> = shared.iter().map(|(_, c)| c.remote_key.as_str()).collect();
    let ac = buildgrid_ac(&server, &keys);
    for (name, c) in &shared {
        let held = ac.get(&c.remote_key).cloned().flatten();
        assert_eq!(
            held.as_ref(),
            Some(&c.outputs),
            "BuildGrid's ActionCache does not hold {name}'s result under {}",
            c.remote_key
        );
    }
    let xclbin = s.art("__tiny_2fpga__fpga1__/fpga1.xclbin");

    // the copy's `.buckconfig.local` names the server; the flag turns the cache on
    let remote = ["-c", "ci.remote_cache=true"];
    s.clean();
    let (_, summary) = s.build_reporting(&remote);
    let second = commands(&s);
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        first.keys().collect::<Vec<_>>(),
        "the two builds ran different commands"
    );
    for (name, c) in &second {
        let expected = if named.contains(&name) {
            "local"
        } else {
            "remote"
        };
        assert_eq!(
            c.executor, expected,
            "{name} after `forge clean`:\n{summary}"
        );
        let before = &first[name];
        assert_eq!(
            (&c.remote_key, &c.outputs),
            (&before.remote_key, &before.outputs),
            "{name}: its remote key or outputs changed between two builds of the same sources"
        );
    }
    eprintln!(
        "after `forge clean`: {} commands, {} from BuildGrid, {} run locally (not shared)",
        second.len(),
        second.values().filter(|c| c.executor == "remote").count(),
        second.values().filter(|c| c.executor == "local").count()
    );
    let again: Vec<String> = not_shared(&summary).into_iter().map(|(n, _)| n).collect();
    assert_eq!(again.iter().collect::<Vec<_>>(), named, "{summary}");
    assert_eq!(s.art("__tiny_2fpga__fpga1__/fpga1.xclbin"), xclbin);
}
