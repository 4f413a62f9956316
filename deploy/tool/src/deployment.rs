//! The deployment description `deploy/<name>.toml`: parsed with spans, so every error names the
//! file and line, then resolved (generated devices and links filled in) and validated against
//! the platform.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::Path;

use anyhow::{bail, Result};
use serde::Deserialize;
use toml::Spanned;

use crate::board_checks::{check_clock, wrong_platform};
use crate::budget;
use crate::cabling::{self, cable_length, generate, parse_end};
use crate::diag::Source;
use crate::fields;
use crate::hls_app::parse as hls_parse;
use crate::hls_app::HlsApp;
use crate::platform::Platform;
use crate::slurm::{parse_slurm, RawSlurm};
pub use crate::slurm::{Slurm, DEFAULT_TIME};

/// An integer or a float in TOML (`clock_mhz = 250` and `= 322.265625` both read).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn get(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeployment {
    name: Spanned<String>,
    platform: Spanned<String>,
    app: Spanned<String>,
    cards_per_node: Option<Spanned<u32>>,
    clock_mhz: Option<Spanned<Number>>,
    #[serde(default)]
    device: Vec<Spanned<RawDevice>>,
    devices: Option<Spanned<RawGenerated>>,
    topology: Option<Spanned<RawTopology>>,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
    slurm: Option<RawSlurm>,
    /// The published measurement the report sets the plan beside (`Beside`).
    beside: Option<Spanned<String>>,
    /// `app = "hls"`: the user's kernels and their streams (src/hls_app).
    #[serde(default)]
    kernel: Vec<Spanned<hls_parse::RawKernel>>,
    #[serde(default)]
    stream: Vec<Spanned<hls_parse::RawStream>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: Spanned<String>,
    node: Spanned<u32>,
    card: Spanned<u32>,
    clock_mhz: Option<Spanned<Number>>,
    role: Option<Spanned<String>>,
    max_util: Option<budget::Table>,
    min_util: Option<budget::Table>,
    /// CU name -> SLR (e.g. `slr = { finn_fpga0 = "SLR0" }`).
    #[serde(default)]
    slr: BTreeMap<String, Spanned<String>>,
    /// "cu.port" -> memory bank (e.g. `memory = { "dma_in_0.m_axi_gmem" = "HBM[4]" }`).
    #[serde(default)]
    memory: BTreeMap<String, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGenerated {
    count: Spanned<u32>,
    role: Option<Spanned<String>>,
    max_util: Option<budget::Table>,
    min_util: Option<budget::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: Spanned<String>,
    cable_m: Option<Spanned<Number>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: Spanned<String>,
    b: Spanned<String>,
    cable_m: Option<Spanned<Number>>,
}

/// The cards per node of a description that gives none: those of the paper's system, Noctua
/// 2 (its cluster file, built into this binary; the job script of every cluster is held to
/// that cluster's own file).
pub fn default_cards_per_node() -> u32 {
    static N: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        let file = "toolchains/clusters/noctua2.toml";
        let text = include_str!("../../../toolchains/clusters/noctua2.toml");
        let c = cluster_file::Cluster::parse(file, text).expect("the built-in noctua2.toml");
        c.job
            .cards_per_node
            .expect("noctua2.toml has job.cards_per_node")
            .0
    })
}
/// Fibre of one cable through the optical switch when the file gives none.
pub const DEFAULT_CABLE_M: f64 = 5.0;
/// FINN+'s `max_utilization` default (finn-plus 1.6.1 PartitioningConfiguration).
pub const DEFAULT_MAX_UTIL: f64 = 0.8;
/// The resources a budget may name (the partitioner's names).
pub const RESOURCES: [&str; 5] = ["LUT", "FF", "BRAM_18K", "URAM", "DSP"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    Finn,
    AuroraBench,
    /// The user's own HLS kernels (`[[kernel]]`, `[[stream]]`).
    Hls,
}

impl App {
    /// As `app =` spells it.
    pub fn name(self) -> &'static str {
        match self {
            App::Finn => "finn",
            App::AuroraBench => "aurora_bench",
            App::Hls => "hls",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Bench,
    Forward,
    /// FINN devices have no role.
    None,
}

#[derive(Clone, Debug)]
pub struct Device {
    pub name: String,
    pub node: u32,
    pub card: u32,
    pub clock_mhz: f64,
    pub role: Role,
    /// Resource -> fraction of the device; every resource in [`RESOURCES`] present.
    pub max_util: BTreeMap<String, f64>,
    pub max_util_span: Range<usize>,
    /// Resource -> the least fraction the plan must use (0 unless `min_util` says).
    pub min_util: BTreeMap<String, f64>,
    pub min_util_span: Range<usize>,
    pub slr: BTreeMap<String, (String, Range<usize>)>,
    pub memory: BTreeMap<String, (String, Range<usize>)>,
    pub span: Range<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct End {
    pub device: String,
    pub port: u32,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.device, self.port)
    }
}

#[derive(Clone, Debug)]
pub struct Link {
    pub a: End,
    pub b: End,
    pub cable_m: f64,
    pub span: Range<usize>,
}

impl Link {
    /// The other end of the cable when `end` is one of its ends.
    pub fn peer(&self, end: &End) -> Option<&End> {
        if &self.a == end {
            Some(&self.b)
        } else if &self.b == end {
            Some(&self.a)
        } else {
            None
        }
    }
}

/// A parsed, resolved and validated deployment.
#[derive(Clone, Debug)]
pub struct Deployment {
    pub src: Source,
    pub name: String,
    pub platform: String,
    pub app: App,
    pub cards_per_node: u32,
    pub clock_mhz: f64,
    pub devices: Vec<Device>,
    pub links: Vec<Link>,
    pub topology_kind: Option<String>,
    pub slurm: Slurm,
    /// Where errors about the deployment as a whole point (the `name` key).
    pub top_span: Range<usize>,
    /// The `cards_per_node` key (or the `name` key when absent).
    pub cards_span: Range<usize>,
    /// Where errors about the cabling point ([topology] or the first [[link]]).
    pub cabling_span: Range<usize>,
    /// `app = "hls"`: CUs and streams; empty for the other apps.
    pub hls: HlsApp,
    pub beside: Beside,
}

/// What the report's "next to" table compares a FINN plan with (the description's `beside`;
/// the AuroraFlow paper's MobileNet when absent). Both are figures of `paper/figures.toml`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Beside {
    /// The AuroraFlow paper's MobileNet-V1 on two U280s (per-card LUT and BRAM, FPS).
    PaperMobilenet,
    /// finn-examples' published ResNet-50 (FPS and latency on its board).
    FinnExamplesResnet50,
}

fn parse_beside(src: &Source, b: Option<&Spanned<String>>) -> Result<Beside> {
    let Some(b) = b else {
        return Ok(Beside::PaperMobilenet);
    };
    match b.get_ref().as_str() {
        "paper_mobilenet" => Ok(Beside::PaperMobilenet),
        "finn_examples_resnet50" => Ok(Beside::FinnExamplesResnet50),
        other => Err(src.at(
            &b.span(),
            format!("beside '{other}' is not one of: paper_mobilenet, finn_examples_resnet50"),
        )),
    }
}

fn parse_role(src: &Source, r: &Spanned<String>) -> Result<Role> {
    match r.get_ref().as_str() {
        "bench" => Ok(Role::Bench),
        "forward" => Ok(Role::Forward),
        other => Err(src.at(
            &r.span(),
            format!("role '{other}' is not one of: bench, forward"),
        )),
    }
}

impl Deployment {
    pub fn load(path: &Path, platform: &Platform) -> Result<Deployment> {
        let src = Source::read(path)?;
        Self::parse(src, platform)
    }

    pub fn parse(src: Source, platform: &Platform) -> Result<Deployment> {
        let raw: RawDeployment = toml::from_str(&src.text).map_err(|e| src.toml_error(e))?;
        fields::check_printable(&src)?;
        let app = parse_header(&src, &raw, platform)?;
        let cards_per_node = raw
            .cards_per_node
            .as_ref()
            .map(|c| *c.get_ref())
            .unwrap_or_else(default_cards_per_node);
        if cards_per_node == 0 {
            return Err(src.at(
                &raw.cards_per_node.as_ref().unwrap().span(),
                "cards_per_node must be at least 1",
            ));
        }
        let clock_mhz = raw
            .clock_mhz
            .as_ref()
            .map(|c| c.get_ref().get())
            .unwrap_or(platform.default_kernel_clock_mhz);
        if let Some(c) = &raw.clock_mhz {
            check_clock(&src, c, platform)?;
        }
        let defaults = Defaults {
            app,
            cards_per_node,
            clock_mhz,
        };
        let devices = match (&raw.devices, raw.device.is_empty()) {
            (Some(g), false) => {
                return Err(src.at(
                    &g.span(),
                    "[devices] (generated) and [[device]] (explicit) are exclusive; keep one",
                ))
            }
            (Some(g), true) => generated_devices(&src, g, &defaults)?,
            (None, true) => {
                return Err(src.at(
                    &raw.name.span(),
                    "no devices: add [[device]] tables or a [devices] count",
                ))
            }
            (None, false) => explicit_devices(&src, &raw.device, &defaults, platform)?,
        };
        check_devices(&src, app, &devices)?;
        let (links, topology_kind, cabling_span) = parse_cabling(&src, &raw, &devices)?;
        let slurm = match raw.slurm {
            Some(s) => parse_slurm(&src, s)?,
            None => Slurm {
                time: DEFAULT_TIME.into(),
                modules: None,
                ..Slurm::default()
            },
        };
        let beside = parse_beside(&src, raw.beside.as_ref())?;
        let (raw_kernels, raw_streams) = (raw.kernel, raw.stream);
        let mut dep = Deployment {
            name: raw.name.get_ref().clone(),
            platform: raw.platform.get_ref().clone(),
            app,
            cards_per_node,
            clock_mhz,
            devices,
            links,
            topology_kind,
            slurm,
            top_span: raw.name.span(),
            cards_span: raw
                .cards_per_node
                .as_ref()
                .map(|c| c.span())
                .unwrap_or(raw.name.span()),
            cabling_span,
            src,
            hls: HlsApp::default(),
            beside,
        };
        dep.check_nodes()?;
        cabling::check_links(&dep, platform)?;
        crate::finn_path::check(&dep, &platform.ports())?;
        dep.hls = hls_parse::parse(&dep, &raw_kernels, &raw_streams, platform)?;
        Ok(dep)
    }

    /// The job asks Slurm for as many nodes as the highest node number needs, so a gap in
    /// the numbering would allocate nodes no device uses.
    fn check_nodes(&self) -> Result<()> {
        let used: std::collections::BTreeSet<u32> = self.devices.iter().map(|d| d.node).collect();
        // The set is ordered: the first number that is not its own position is missing.
        let missing = used
            .iter()
            .zip(0u32..)
            .find(|(node, i)| *node != i)
            .map(|(_, i)| i);
        if let Some(missing) = missing {
            let highest = self.devices.iter().max_by_key(|d| d.node).unwrap();
            return Err(self.src.at(
                &highest.span,
                format!(
                    "device {} is on node {} but no device is on node {missing}: the job \
                     would allocate {} nodes; number the nodes 0..{} without gaps",
                    highest.name,
                    highest.node,
                    u64::from(highest.node) + 1,
                    used.len() - 1
                ),
            ));
        }
        Ok(())
    }

    pub fn device_names(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.name.clone()).collect()
    }

    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The cables at a device, ordered by its port.
    pub fn links_of(&self, device: &str) -> Vec<(u32, &Link, End)> {
        let mut out = Vec::new();
        for l in &self.links {
            for end in [&l.a, &l.b] {
                if end.device == device && !out.iter().any(|(p, _, _)| *p == end.port) {
                    out.push((end.port, l, l.peer(end).unwrap().clone()));
                }
            }
        }
        out.sort_by_key(|(p, _, _)| *p);
        out
    }

    /// The description names the `fpga_deployment` target it belongs to: the job, the
    /// scripts and the report all carry `name`, which must not tell another deployment's.
    pub fn check_name(&self, target: &str) -> Result<()> {
        if self.name != target {
            return Err(self.src.at(
                &self.top_span,
                format!(
                    "name = {:?} but the description belongs to target {target:?}; set name = \
                     {target:?} (or rename the target)",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// The `--devices` list of the BUCK target must be the file's devices, in order.
    pub fn check_device_list(&self, given: &[String]) -> Result<()> {
        let mine = self.device_names();
        if mine != given {
            bail!(
                "{}:{}: the deployment's devices [{}] differ from the target's devices [{}]; \
                 make the BUCK target's devices match the file",
                self.src.path,
                self.src.line(&self.devices[0].span),
                mine.join(", "),
                given.join(", ")
            );
        }
        Ok(())
    }

    pub fn nodes(&self) -> u32 {
        self.devices.iter().map(|d| d.node + 1).max().unwrap_or(1)
    }

    /// Ranks on the fullest node (Slurm's --ntasks-per-node).
    pub fn tasks_per_node(&self) -> u32 {
        let mut per: BTreeMap<u32, u32> = BTreeMap::new();
        for d in &self.devices {
            *per.entry(d.node).or_default() += 1;
        }
        per.values().copied().max().unwrap_or(1)
    }
}

/// What every device takes unless it says otherwise.
struct Defaults {
    app: App,
    cards_per_node: u32,
    clock_mhz: f64,
}

/// The deployment's name, platform and app: the name must be one the scripts and targets
/// can carry, the platform the FPGA toolchain's.
fn parse_header(src: &Source, raw: &RawDeployment, platform: &Platform) -> Result<App> {
    if let Some(why) = fields::deployment_name(raw.name.get_ref()) {
        return Err(src.at(
            &raw.name.span(),
            format!("name {:?} {why}; rename the deployment", raw.name.get_ref()),
        ));
    }
    if raw.platform.get_ref() != &platform.name {
        return Err(src.at(
            &raw.platform.span(),
            wrong_platform(raw.platform.get_ref(), platform),
        ));
    }
    match raw.app.get_ref().as_str() {
        "finn" => Ok(App::Finn),
        "aurora_bench" => Ok(App::AuroraBench),
        "hls" => Ok(App::Hls),
        other => Err(src.at(
            &raw.app.span(),
            format!("app '{other}' is not one of: finn, aurora_bench, hls"),
        )),
    }
}

/// `[devices] count = N`: fpga0..fpgaN-1, filling each node's cards in turn.
fn generated_devices(
    src: &Source,
    g: &Spanned<RawGenerated>,
    defaults: &Defaults,
) -> Result<Vec<Device>> {
    let gen = g.get_ref();
    let count = *gen.count.get_ref();
    if count == 0 {
        return Err(src.at(&gen.count.span(), "count must be at least 1"));
    }
    let role = match &gen.role {
        Some(r) => parse_role(src, r)?,
        None => Role::None,
    };
    let bounds = budget::parse(
        src,
        &format!("fpga0..fpga{}", count - 1),
        gen.max_util.as_ref(),
        gen.min_util.as_ref(),
        g.span(),
    )?;
    Ok((0..count)
        .map(|i| Device {
            name: format!("fpga{i}"),
            node: i / defaults.cards_per_node,
            card: i % defaults.cards_per_node,
            clock_mhz: defaults.clock_mhz,
            // The generated form benchmarks: device 0 measures, the rest forward.
            role: if defaults.app == App::AuroraBench && i == 0 {
                Role::Bench
            } else {
                role.clone()
            },
            max_util: bounds.max.clone(),
            max_util_span: bounds.max_span.clone(),
            min_util: bounds.min.clone(),
            min_util_span: bounds.min_span.clone(),
            slr: BTreeMap::new(),
            memory: BTreeMap::new(),
            span: g.span(),
        })
        .collect())
}

/// `[[device]]` tables, each with its node and card.
fn explicit_devices(
    src: &Source,
    raw: &[Spanned<RawDevice>],
    defaults: &Defaults,
    platform: &Platform,
) -> Result<Vec<Device>> {
    let cards_per_node = defaults.cards_per_node;
    let mut out = Vec::new();
    for d in raw {
        let r = d.get_ref();
        let card = *r.card.get_ref();
        if card >= cards_per_node {
            return Err(src.at(
                &r.card.span(),
                format!(
                    "device {}: card {card} exceeds the {cards_per_node} cards per \
                     node (acl0..acl{}); move it to another node",
                    r.name.get_ref(),
                    cards_per_node - 1
                ),
            ));
        }
        if let Some(why) = fields::device_name(r.name.get_ref()) {
            return Err(src.at(
                &r.name.span(),
                format!("device name {:?} {why}; rename it", r.name.get_ref()),
            ));
        }
        let clk = r.clock_mhz.as_ref().map(|c| c.get_ref().get());
        if let Some(c) = &r.clock_mhz {
            check_clock(src, c, platform)?;
        }
        let role = match &r.role {
            Some(role) => parse_role(src, role)?,
            None => Role::None,
        };
        let spanned = |m: &BTreeMap<String, Spanned<String>>| {
            m.iter()
                .map(|(k, v)| (k.clone(), (v.get_ref().clone(), v.span())))
                .collect()
        };
        let bounds = budget::parse(
            src,
            r.name.get_ref(),
            r.max_util.as_ref(),
            r.min_util.as_ref(),
            r.name.span(),
        )?;
        out.push(Device {
            name: r.name.get_ref().clone(),
            node: *r.node.get_ref(),
            card,
            clock_mhz: clk.unwrap_or(defaults.clock_mhz),
            role,
            max_util: bounds.max,
            max_util_span: bounds.max_span,
            min_util: bounds.min,
            min_util_span: bounds.min_span,
            slr: spanned(&r.slr),
            memory: spanned(&r.memory),
            span: r.name.span(),
        });
    }
    Ok(out)
}

/// Every device name once, every (node, card) slot once, and each device's role as its
/// app needs it.
fn check_devices(src: &Source, app: App, devices: &[Device]) -> Result<()> {
    let mut seen: HashMap<&str, &Device> = HashMap::new();
    let mut slots: HashMap<(u32, u32), &Device> = HashMap::new();
    for d in devices {
        if let Some(prev) = seen.insert(&d.name, d) {
            return Err(src.at(
                &d.span,
                format!(
                    "device name {} is used twice (also at line {})",
                    d.name,
                    src.line(&prev.span)
                ),
            ));
        }
        if let Some(prev) = slots.insert((d.node, d.card), d) {
            return Err(src.at(
                &d.span,
                format!(
                    "devices {} and {} are both node {} card {}",
                    prev.name, d.name, d.node, d.card
                ),
            ));
        }
        if app == App::AuroraBench && d.role == Role::None {
            return Err(src.at(
                &d.span,
                format!(
                    "device {}: app aurora_bench needs role = \"bench\" or \"forward\"",
                    d.name
                ),
            ));
        }
        if app != App::AuroraBench && d.role != Role::None {
            return Err(src.at(
                &d.span,
                format!("device {}: app {} takes no role", d.name, app.name()),
            ));
        }
    }
    Ok(())
}

/// The links: generated from `[topology] kind`, or the `[[link]]` tables; with the
/// topology's kind (when generated) and where errors about the cabling point.
fn parse_cabling(
    src: &Source,
    raw: &RawDeployment,
    devices: &[Device],
) -> Result<(Vec<Link>, Option<String>, Range<usize>)> {
    match (&raw.topology, raw.link.first()) {
        (Some(t), Some(_)) => Err(src.at(
            &t.span(),
            "[topology] kind and [[link]] tables are exclusive; keep one",
        )),
        (Some(t), None) => {
            let t = t.get_ref();
            let cable_m = cable_length(src, &t.cable_m)?;
            let links = generate(src, &t.kind, devices, cable_m)?;
            Ok((links, Some(t.kind.get_ref().clone()), t.kind.span()))
        }
        (None, Some(first)) => {
            let mut links = Vec::new();
            for l in &raw.link {
                let r = l.get_ref();
                links.push(Link {
                    a: parse_end(src, &r.a)?,
                    b: parse_end(src, &r.b)?,
                    cable_m: cable_length(src, &r.cable_m)?,
                    span: l.span(),
                });
            }
            Ok((links, None, first.span()))
        }
        (None, None) => Ok((Vec::new(), None, raw.name.span())),
    }
}
