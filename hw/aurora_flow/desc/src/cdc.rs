//! The kernel's clock-domain crossings, found in the RTL, and the check that the XDC bounds
//! each of them with a constraint that is in force.
//!
//! Precedence (UG903 v2023.2 "Constraints Precedence" / "Timing Exceptions Priority"):
//! `set_clock_groups` beats `set_false_path`, which beats `set_max_delay`/`set_min_delay`,
//! which beat `set_multicycle_path`, whatever their order in the file; UG906's methodology
//! check TIMING-24 ("Overridden Max delay datapath only") reports a `set_max_delay
//! -datapath_only` under a clock group or false path. `set_bus_skew` is not a timing
//! exception: clock groups and false paths leave it in force. So a crossing is bounded when a
//! `set_max_delay -datapath_only` covers it (plus `set_bus_skew` for a Gray-coded bus) and no
//! clock group between its two clocks and no false path over it shadows that limit, as the
//! XPM CDC macros' own constraints do (UG974 xpm_cdc_gray: max delay + bus skew). Level and
//! reset synchronizers are cut with `set_false_path` (as xpm_cdc_single / xpm_cdc_async_rst).

use crate::xdc::{glob, Constraint, Kind, Object};
use anyhow::{bail, Result};

/// A clock of the design as the XDC's queries see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    /// the RTL net that carries it
    pub net: String,
    /// the clock it is derived from (a `create_clock` of this XDC), if any
    pub master: Option<String>,
}

/// What must hold for one crossing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Need {
    /// `set_max_delay -datapath_only`, not shadowed
    MaxDelay,
    /// `set_bus_skew` (Gray-coded pointers: the bits must arrive within one period)
    BusSkew,
    /// `set_false_path` (or a max delay) to the endpoint, from anywhere
    Cut,
}

/// One crossing: a representative start cell on clock `from_clk` (None: any source) to an
/// endpoint (a cell, or a cell's pin such as `/CLR`) on `to_clk`.
#[derive(Clone, Debug, PartialEq)]
pub struct Crossing {
    pub what: String,
    pub from_cell: Option<String>,
    pub from_clk: Option<String>,
    pub to_cell: String,
    pub to_pin: Option<String>,
    pub to_clk: String,
    pub needs: Vec<Need>,
}

/// The kernel's hierarchy above `u_kernel` in a linked design (any prefix: the XDC's patterns
/// start with `*/u_kernel/`).
const TOP: &str = "level0_i/ulp/aurora_flow_0/inst";

/// Clock nets of aurora_flow.sv and where their clocks come from: the Aurora core's user
/// clock is derived (GT TXOUTCLK, PG074 "Clocking") from the QSFP reference clock the XDC
/// creates; ap_clk and init_clk are the platform's.
pub fn clocks(instance: u32) -> Vec<Clock> {
    vec![
        Clock {
            net: "user_clk".into(),
            master: Some(format!("gt_refclk{instance}_in")),
        },
        Clock {
            net: "ap_clk".into(),
            master: None,
        },
        Clock {
            net: "init_clk".into(),
            master: None,
        },
    ]
}

/// An instance of `module` in the RTL text: name and `.port(net)` connections.
#[derive(Debug)]
struct Instance {
    name: String,
    ports: Vec<(String, String)>,
}

fn instances(rtl: &str, module: &str) -> Vec<Instance> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in rtl.split_inclusive('\n') {
        let from = offset + (line.len() - line.trim_start().len());
        offset += line.len();
        let t = &rtl[from..];
        if !t.starts_with(module) || !t[module.len()..].starts_with([' ', '#', '(']) {
            continue;
        }
        // from here on: skip a `#( ... )` parameter list, then `u_name (` ... `);`
        let rest = &t[module.len()..];
        let mut s = rest.trim_start();
        if let Some(p) = s.strip_prefix('#') {
            let Some(end) = close(p.trim_start()) else {
                continue;
            };
            s = p.trim_start()[end..].trim_start();
        }
        let name: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.starts_with("u_") {
            continue;
        }
        let body = s[name.len()..].trim_start();
        let Some(end) = close(body) else { continue };
        let mut ports = Vec::new();
        for conn in body[1..end - 1].split('.').skip(1) {
            if let Some((port, net)) = conn.split_once('(') {
                let net = net.split(')').next().unwrap_or("").trim().to_string();
                ports.push((port.trim().to_string(), net));
            }
        }
        out.push(Instance { name, ports });
    }
    out
}

/// `s` starts with `(`: the index after its matching `)`.
fn close(s: &str) -> Option<usize> {
    if !s.starts_with('(') {
        return None;
    }
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn port<'a>(i: &'a Instance, p: &str) -> Result<&'a str> {
    match i.ports.iter().find(|(n, _)| n == p) {
        Some((_, net)) => Ok(net),
        None => bail!("aurora_flow.sv: {} has no `.{p}(...)` connection", i.name),
    }
}

/// Every crossing of the kernel: the CDC primitives instantiated in aurora_flow.sv (and the
/// reset synchronizer inside af_ip_reset.sv), with the clocks their ports are wired to.
pub fn crossings(aurora_flow_sv: &str, af_ip_reset_sv: &str) -> Result<Vec<Crossing>> {
    let cell = |inst: &str, reg: &str| format!("{TOP}/u_kernel/{inst}/{reg}");
    let mut out = Vec::new();
    for f in instances(aurora_flow_sv, "af_async_fifo") {
        let (w, r) = (port(&f, "wr_clk")?, port(&f, "rd_clk")?);
        for (ptr, sync, a, b) in [
            ("wgray_reg[0]", "u_sync_wgray/meta_reg[0]", w, r),
            ("rgray_reg[0]", "u_sync_rgray/meta_reg[0]", r, w),
        ] {
            out.push(Crossing {
                what: format!("{} Gray pointer {ptr}", f.name),
                from_cell: Some(cell(&f.name, ptr)),
                from_clk: Some(a.into()),
                to_cell: cell(&f.name, sync),
                to_pin: None,
                to_clk: b.into(),
                needs: vec![Need::MaxDelay, Need::BusSkew],
            });
        }
        // written on one clock, read into m_data on the other
        out.push(Crossing {
            what: format!("{} memory read", f.name),
            from_cell: Some(cell(&f.name, "mem_reg_bram_0")),
            from_clk: Some(w.into()),
            to_cell: cell(&f.name, "m_data_reg[0]"),
            to_pin: None,
            to_clk: r.into(),
            needs: vec![Need::MaxDelay],
        });
    }
    for b in instances(aurora_flow_sv, "af_cdc_bundle") {
        let (s, d) = (port(&b, "src_clk")?, port(&b, "dst_clk")?);
        for (src, dst, a, z) in [
            ("hold_reg[0]", "dst_data_reg[0]", s, d),
            ("req_reg", "u_req/meta_reg[0]", s, d),
            ("seen_reg", "u_ack/meta_reg[0]", d, s),
        ] {
            out.push(Crossing {
                what: format!("status bundle {} {src}", b.name),
                from_cell: Some(cell(&b.name, src)),
                from_clk: Some(a.into()),
                to_cell: cell(&b.name, dst),
                to_pin: None,
                to_clk: z.into(),
                needs: vec![Need::MaxDelay],
            });
        }
    }
    for s in instances(aurora_flow_sv, "af_sync") {
        out.push(Crossing {
            what: format!("level synchronizer {}", s.name),
            from_cell: None,
            from_clk: None,
            to_cell: cell(&s.name, "meta_reg[0]"),
            to_pin: None,
            to_clk: port(&s, "clk")?.into(),
            needs: vec![Need::Cut],
        });
    }
    let mut resets: Vec<(String, String)> = Vec::new();
    for r in instances(aurora_flow_sv, "af_reset_sync") {
        resets.push((r.name.clone(), port(&r, "clk")?.into()));
    }
    for ip in instances(aurora_flow_sv, "af_ip_reset") {
        let clk = port(&ip, "init_clk")?.to_string();
        for r in instances(af_ip_reset_sv, "af_reset_sync") {
            resets.push((format!("{}/{}", ip.name, r.name), clk.clone()));
        }
    }
    for (name, clk) in resets {
        // asynchronous assertion: the clear pins are not timed (release is synchronous)
        out.push(Crossing {
            what: format!("reset synchronizer {name}"),
            from_cell: None,
            from_clk: None,
            to_cell: cell(&name, "stages_reg[0]"),
            to_pin: Some("CLR".into()),
            to_clk: clk,
            needs: vec![Need::Cut],
        });
    }
    Ok(out)
}

/// Does clock query `o` name the clock on `net`? A pattern that names none of this XDC's own
/// clocks could be the platform's or the tool's name for any clock (Vivado names ap_clk and
/// the derived user clock itself), so it is taken to name them: the check errs towards
/// "shadowed", never towards "bounded".
fn names_clock(o: &Object, net: &str, clocks: &[Clock], created: &[String]) -> bool {
    let Object::Clocks { pattern, generated } = o else {
        return false;
    };
    let clock = clocks.iter().find(|c| c.net == net);
    let own = created.iter().any(|n| glob(pattern, n));
    if !own {
        return true;
    }
    match clock.and_then(|c| c.master.as_ref()) {
        Some(master) => *generated && glob(pattern, master),
        None => false,
    }
}

fn from_covers(c: &Constraint, x: &Crossing, clocks: &[Clock], created: &[String]) -> bool {
    c.from.is_empty()
        || c.from.iter().any(|o| match (o, &x.from_cell, &x.from_clk) {
            (Object::Cells(p), Some(cell), _) => glob(p, cell),
            (Object::Pins(p), Some(cell), _) => glob(p, &format!("{cell}/C")),
            (Object::Clocks { .. }, _, Some(clk)) => names_clock(o, clk, clocks, created),
            // a crossing from anywhere: only an unrestricted -from covers all of it
            _ => false,
        })
}

fn to_covers(c: &Constraint, x: &Crossing, clocks: &[Clock], created: &[String]) -> bool {
    c.to.is_empty()
        || c.to.iter().any(|o| match o {
            Object::Cells(p) => glob(p, &x.to_cell),
            Object::Pins(p) => glob(
                p,
                &format!("{}/{}", x.to_cell, x.to_pin.as_deref().unwrap_or("D")),
            ),
            Object::Clocks { .. } => names_clock(o, &x.to_clk, clocks, created),
            Object::Ports(_) => false,
        })
}

fn covers(c: &Constraint, x: &Crossing, clocks: &[Clock], created: &[String]) -> bool {
    from_covers(c, x, clocks, created) && to_covers(c, x, clocks, created)
}

/// The clock groups that cut the two clocks of `x` apart (UG903 set_clock_groups: clocks in
/// different groups are not timed against each other; with one group, its clocks are not
/// timed against any clock outside it).
fn cutting_groups<'a>(
    xdc: &'a [Constraint],
    x: &Crossing,
    clocks: &[Clock],
    created: &[String],
) -> Vec<&'a Constraint> {
    let Some(from_clk) = &x.from_clk else {
        return vec![];
    };
    xdc.iter()
        .filter(|c| {
            let Kind::ClockGroups { groups } = &c.kind else {
                return false;
            };
            let member = |net: &str| {
                groups
                    .iter()
                    .position(|g| g.iter().any(|o| names_clock(o, net, clocks, created)))
            };
            match (member(from_clk), member(&x.to_clk), groups.len()) {
                (Some(a), Some(b), _) => a != b,
                (Some(_), None, 1) | (None, Some(_), 1) => true,
                _ => false,
            }
        })
        .collect()
}

/// Checks every crossing against the XDC; returns one line per problem (empty: all bounded).
pub fn check(xdc: &[Constraint], crossings: &[Crossing], clocks: &[Clock]) -> Vec<String> {
    let created: Vec<String> = xdc
        .iter()
        .filter_map(|c| match &c.kind {
            Kind::CreateClock { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    let mut problems = Vec::new();
    for c in clocks {
        if let Some(m) = &c.master {
            if !created.contains(m) {
                problems.push(format!(
                    "no create_clock {m}: the clock {} is derived from is not defined",
                    c.net
                ));
            }
        }
    }
    for x in crossings {
        let groups = cutting_groups(xdc, x, clocks, &created);
        let false_paths: Vec<&Constraint> = xdc
            .iter()
            .filter(|c| c.kind == Kind::FalsePath && covers(c, x, clocks, &created))
            .collect();
        let shadow = |c: &Constraint| -> Option<String> {
            // a false path with -through may not cover every path of the crossing; taken as
            // covering it, so the check errs towards "shadowed"
            let by = groups
                .first()
                .map(|g| format!("set_clock_groups (line {})", g.line))
                .or_else(|| {
                    false_paths
                        .first()
                        .map(|f| format!("set_false_path (line {})", f.line))
                })?;
            Some(format!(
                "{}: set_max_delay -datapath_only (line {}) is shadowed by {by}, which takes \
                 precedence (UG903); the crossing has no delay bound",
                x.what, c.line
            ))
        };
        for need in &x.needs {
            match need {
                Need::MaxDelay => {
                    let limits: Vec<&Constraint> = xdc
                        .iter()
                        .filter(|c| {
                            matches!(
                                c.kind,
                                Kind::MaxDelay {
                                    datapath_only: true,
                                    ..
                                }
                            ) && c.through.is_empty()
                                && covers(c, x, clocks, &created)
                        })
                        .collect();
                    if limits.is_empty() {
                        problems.push(format!("{}: no set_max_delay -datapath_only", x.what));
                    }
                    for c in limits {
                        problems.extend(shadow(c));
                    }
                }
                Need::BusSkew => {
                    let ok = xdc.iter().any(|c| {
                        matches!(c.kind, Kind::BusSkew { .. }) && covers(c, x, clocks, &created)
                    });
                    if !ok {
                        problems.push(format!("{}: no set_bus_skew", x.what));
                    }
                }
                Need::Cut => {
                    let ok = xdc.iter().any(|c| {
                        c.through.is_empty()
                            && matches!(c.kind, Kind::FalsePath | Kind::MaxDelay { .. })
                            && c.from.is_empty()
                            && to_covers(c, x, clocks, &created)
                    });
                    if !ok {
                        problems.push(format!(
                            "{}: no set_false_path -to its first stage{}",
                            x.what,
                            x.to_pin
                                .as_deref()
                                .map(|p| format!(" ({p} pins)"))
                                .unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    problems
}
