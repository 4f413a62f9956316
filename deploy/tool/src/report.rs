//! A self-contained HTML page with an inline SVG of the deployment: cards (node/card) with
//! their kernels, cables with port names and the bandwidth each cut needs at the planned FPS,
//! per-device utilisation against the budget, and the paper's per-card figures beside ours.

use std::fmt::Write as _;

use serde_json::Value;

use crate::deployment::{Beside, Deployment, End};
use crate::plan::{CutOnCable, Plan};
use crate::platform::Platform;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const CARD_W: f64 = 210.0;
const CARD_GAP: f64 = 70.0;
const ROW_GAP: f64 = 90.0;
const LINE: f64 = 14.0;
const BAR: f64 = 11.0;

struct Placed {
    x: f64,
    y: f64,
    h: f64,
}

/// Kernel CU names of a device from its sim description.
fn cus(sim: Option<&Value>) -> Vec<String> {
    sim.and_then(|s| s["kernels"].as_array())
        .map(|ks| {
            ks.iter()
                .map(|k| {
                    format!(
                        "{} ({})",
                        k["cu"].as_str().unwrap_or("?"),
                        k["kind"].as_str().unwrap_or("?")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn render(
    dep: &Deployment,
    platform: &Platform,
    plan: Option<&Plan>,
    cuts: &[CutOnCable],
    sims: &[Value],
) -> String {
    let sim_of = |dev: &str| sims.iter().find(|s| s["device"].as_str() == Some(dev));
    let layout = Layout::of(dep, plan, &sim_of);
    let (width, height) = (layout.width, layout.height);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    draw_cards(&mut svg, dep, plan, &sim_of, &layout.placed);
    draw_cables(&mut svg, dep, cuts, &layout);
    svg.push_str("</svg>\n");

    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>Deployment {n}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #999;padding:2px 8px;text-align:right}}\
         .bar{{display:inline-block;height:10px;background:#48c}}\
         .budget{{display:inline-block;height:10px;border-right:2px solid #c33}}</style></head><body>\n\
         <h1>Deployment {n}</h1>\n<p>{app:?} on {nd} × {pf}; {nn} node(s), {cpn} cards per node; \
         source <code>{src}</code>.</p>\n",
        n = esc(&dep.name),
        app = dep.app,
        nd = dep.devices.len(),
        pf = esc(&platform.name),
        nn = dep.nodes(),
        cpn = dep.cards_per_node,
        src = esc(&dep.src.path)
    );
    if let Some(p) = plan {
        let _ = writeln!(
            html,
            "<p>Planned throughput <b>{:.2} FPS</b> ({} cut(s); model {}).</p>",
            p.fps,
            p.cuts.len(),
            esc(&p.model)
        );
    }
    html.push_str(&svg);
    html.push_str(&crate::hls_app::report::streams_table(dep));
    if let Some(p) = plan {
        plan_tables(&mut html, dep, p);
        // a replica plan's cards hold copies, not parts, of one network
        if p.replicas.is_empty() {
            crate::one_card::section(&mut html, dep, platform, p);
        }
    }
    html.push_str("</body></html>\n");
    html
}

/// Where each card sits: one row per node, cards side by side, so the rows read like the
/// machine; the cable legend below.
struct Layout {
    placed: Vec<Placed>,
    width: f64,
    height: f64,
    legend_y: f64,
}

impl Layout {
    fn of<'a>(
        dep: &Deployment,
        plan: Option<&Plan>,
        sim_of: &dyn Fn(&str) -> Option<&'a Value>,
    ) -> Layout {
        // One row per node, cards side by side: the rows read like the machine.
        let mut placed: Vec<Placed> = Vec::new();
        let mut row_h: std::collections::BTreeMap<u32, f64> = Default::default();
        let bars = |dev: &str| {
            plan.and_then(|p| p.device(dev))
                .map(|dp| dp.utilization.len())
                .unwrap_or(0)
        };
        for d in &dep.devices {
            let h =
                60.0 + LINE * cus(sim_of(&d.name)).len().max(1) as f64 + BAR * bars(&d.name) as f64;
            let e = row_h.entry(d.node).or_default();
            *e = e.max(h);
        }
        let mut row_y: std::collections::BTreeMap<u32, f64> = Default::default();
        let mut y = 40.0;
        for (node, h) in &row_h {
            row_y.insert(*node, y);
            y += h + ROW_GAP;
        }
        for d in &dep.devices {
            let h = row_h[&d.node];
            placed.push(Placed {
                x: 60.0 + d.card as f64 * (CARD_W + CARD_GAP),
                y: row_y[&d.node],
                h,
            });
        }
        let width = 120.0 + dep.cards_per_node as f64 * (CARD_W + CARD_GAP);
        // cable labels go into a legend below the cards, numbered on the cables
        let legend_y = y - ROW_GAP / 2.0;
        let height = legend_y + 14.0 * dep.links.len() as f64 + 20.0;
        Layout {
            placed,
            width,
            height,
            legend_y,
        }
    }
}

/// Each card: its name and place, its kernels and the plan's utilisation bars.
fn draw_cards<'a>(
    svg: &mut String,
    dep: &Deployment,
    plan: Option<&Plan>,
    sim_of: &dyn Fn(&str) -> Option<&'a Value>,
    placed: &[Placed],
) {
    for (i, d) in dep.devices.iter().enumerate() {
        let p = &placed[i];
        let _ = writeln!(
            svg,
            r##"<g class="card" data-device="{n}"><rect x="{x}" y="{y}" width="{CARD_W}" height="{h}" rx="6" fill="#eef3fb" stroke="#335"/><text x="{tx}" y="{ty}" font-weight="bold">{n} · n{node:02}:acl{card}</text>"##,
            n = esc(&d.name),
            x = p.x,
            y = p.y,
            h = p.h,
            tx = p.x + 8.0,
            ty = p.y + 16.0,
            node = d.node,
            card = d.card
        );
        for (k, cu) in cus(sim_of(&d.name)).iter().enumerate() {
            let _ = writeln!(
                svg,
                r#"<text class="kernel" x="{}" y="{}">{}</text>"#,
                p.x + 14.0,
                p.y + 52.0 + LINE * k as f64,
                esc(cu)
            );
        }
        // utilisation bars: planned use (blue) against the budget (red mark)
        if let Some(dp) = plan.and_then(|p| p.device(&d.name)) {
            let top = p.y + 44.0 + LINE * cus(sim_of(&d.name)).len().max(1) as f64;
            for (k, (r, u)) in dp.utilization.iter().enumerate() {
                let cap = d.max_util.get(r).copied().unwrap_or(1.0);
                let (x0, y0, w) = (p.x + 70.0, top + BAR * k as f64, CARD_W - 80.0);
                let _ = writeln!(
                    svg,
                    r##"<g class="util" data-resource="{r}"><text x="{tx}" y="{ty}" font-size="9">{r}</text><rect x="{x0}" y="{y0}" width="{w}" height="7" fill="#fff" stroke="#999"/><rect x="{x0}" y="{y0}" width="{uw:.1}" height="7" fill="#48c"/><line x1="{cx:.1}" y1="{y0}" x2="{cx:.1}" y2="{y1}" stroke="#c33" stroke-width="2"/><title>{r}: {pu:.1} % of {pc:.0} %</title></g>"##,
                    r = esc(r),
                    tx = p.x + 14.0,
                    ty = y0 + 7.0,
                    uw = w * u.min(1.0),
                    cx = x0 + w * cap,
                    y1 = y0 + 7.0,
                    pu = u * 100.0,
                    pc = cap * 100.0
                );
            }
        }
        svg.push_str("</g>\n");
    }
}

/// Each cable between its port anchors (QSFP 0 on a card's left edge, QSFP 1 on its right),
/// with the cut or the streams it carries, numbered into the legend.
fn draw_cables(svg: &mut String, dep: &Deployment, cuts: &[CutOnCable], layout: &Layout) {
    let (placed, legend_y) = (&layout.placed, layout.legend_y);
    let idx = |name: &str| dep.devices.iter().position(|d| d.name == name).unwrap();
    let anchor = |e: &End| {
        let p = &placed[idx(&e.device)];
        let x = if e.port == 0 { p.x } else { p.x + CARD_W };
        (x, p.y + 30.0 + 12.0 * e.port as f64)
    };
    for (n, l) in dep.links.iter().enumerate() {
        let (x1, y1) = anchor(&l.a);
        let (x2, y2) = anchor(&l.b);
        let cut = cuts
            .iter()
            .find(|c| (c.from == l.a && c.to == l.b) || (c.from == l.b && c.to == l.a));
        let label = match cut {
            Some(c) => format!(
                "{} ⇄ {} · {} m · cut {}→{}: {} bit, {:.2} Gb/s",
                l.a,
                l.b,
                l.cable_m,
                c.cut.from_layer,
                c.cut.to_layer,
                c.cut.stream_bits,
                c.cut.gbps
            ),
            None => format!("{} ⇄ {} · {} m", l.a, l.b, l.cable_m),
        };
        // The HLS app's streams on the cable (none for the other apps).
        let streams = crate::hls_app::report::cable_streams(dep, l);
        let label = if streams.is_empty() {
            label
        } else {
            format!("{label} · {streams}")
        };
        // A cable back to the same card bends below it; others bend between the cards.
        let (cx, cy) = if l.a.device == l.b.device {
            ((x1 + x2) / 2.0, y1.max(y2) + placed[idx(&l.a.device)].h)
        } else {
            ((x1 + x2) / 2.0, (y1 + y2) / 2.0 - 40.0)
        };
        let _ = writeln!(
            svg,
            r##"<g class="cable" data-a="{a}" data-b="{b}"><path d="M {x1} {y1} Q {cx} {cy} {x2} {y2}" fill="none" stroke="{col}" stroke-width="2"/><title>{t}</title><text x="{mx}" y="{my}" font-size="9" fill="{col}">{num}</text><text x="60" y="{ly}" font-size="10">{num}: {t}</text></g>"##,
            a = esc(&l.a.to_string()),
            b = esc(&l.b.to_string()),
            col = if cut.is_some() || !streams.is_empty() {
                "#c33"
            } else {
                "#369"
            },
            t = esc(&label),
            num = n + 1,
            mx = (x1 + 2.0 * cx + x2) / 4.0,
            my = (y1 + 2.0 * cy + y2) / 4.0 - 3.0,
            ly = legend_y + 14.0 * n as f64
        );
    }
}

/// The plan's utilisation against each card's budget, and the published figures the
/// description names (`beside`) next to the plan's.
fn plan_tables(html: &mut String, dep: &Deployment, p: &Plan) {
    html.push_str("<h2>Utilisation (plan) against the budget</h2>\n<table><tr><th>device</th><th>resource</th><th>planned</th><th>budget</th><th></th></tr>\n");
    for d in &dep.devices {
        let Some(dp) = p.device(&d.name) else {
            continue;
        };
        for (r, u) in &dp.utilization {
            let cap = d.max_util.get(r).copied().unwrap_or(1.0);
            let _ = writeln!(
                html,
                "<tr class=\"util\"><td>{}</td><td>{}</td><td>{:.1} %</td><td>{:.1} %</td>\
                 <td style=\"text-align:left;width:220px\"><span class=\"bar\" style=\"width:{:.0}px\"></span>\
                 <span class=\"budget\" style=\"width:{:.0}px;margin-left:-{:.0}px\"></span></td></tr>",
                esc(&d.name),
                esc(r),
                u * 100.0,
                cap * 100.0,
                u * 200.0,
                cap * 200.0,
                u * 200.0
            );
        }
    }
    html.push_str("</table>\n");
    match dep.beside {
        Beside::PaperMobilenet => beside_paper(html, p),
        Beside::FinnExamplesResnet50 => beside_published(html, dep, p),
    }
}

/// finn-examples' measured ResNet-50 on its board beside this plan's estimate.
fn beside_published(html: &mut String, dep: &Deployment, p: &Plan) {
    let r = &paper::figures().finn_examples_resnet50;
    let _ = writeln!(
        html,
        "<h2>Next to the published ResNet-50</h2>\n<table><tr><th></th><th>cards</th><th>FPS</th>\
         <th>latency</th></tr>\n\
         <tr class=\"paper\"><td>{}</td><td>1 × {}</td><td>{:.2}</td><td>{:.1} ms (measured)</td></tr>\n\
         <tr class=\"ours\"><td>this plan, estimated (FINN estimates, not synthesised)</td>\
         <td>{} × {}</td><td>{:.2}</td><td>{:.1} ms (FINN's no-overlap sum of every layer's cycles)</td></tr></table>",
        esc(&r.citation),
        esc(&r.board),
        r.fps,
        r.latency_ms,
        dep.devices.len(),
        esc(&dep.platform),
        p.fps,
        p.finn_no_overlap_latency_ms
    );
}

/// The AuroraFlow paper's per-card MobileNet figures beside this plan's.
fn beside_paper(html: &mut String, p: &Plan) {
    let paper = paper::figures();
    let mobilenet = &paper.mobilenet_2fpga;
    html.push_str(&format!(
        "<h2>Next to the paper</h2>\n<table><tr><th></th><th>card 0 LUT</th><th>card 1 LUT</th>\
         <th>card 0 BRAM</th><th>card 1 BRAM</th><th>FPS</th></tr>\n\
         <tr class=\"paper\"><td>MobileNet-V1, 2 × U280: {}</td>\
         <td>{:.0} %</td><td>{:.0} %</td><td>{:.0} %</td><td>{:.0} %</td><td>{:.2}</td></tr>\n",
        esc(&paper.citation),
        mobilenet.lut[0] * 100.0,
        mobilenet.lut[1] * 100.0,
        mobilenet.bram[0] * 100.0,
        mobilenet.bram[1] * 100.0,
        mobilenet.fps
    ));
    let u = |i: usize, r: &str| {
        p.devices
            .get(i)
            .and_then(|d| d.utilization.get(r))
            .map(|v| format!("{:.1} %", v * 100.0))
            .unwrap_or_else(|| "–".into())
    };
    let _ = writeln!(
        html,
        "<tr class=\"ours\"><td>this plan, estimated (FINN estimates, not synthesised)</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td></tr></table>",
        u(0, "LUT"),
        u(1, "LUT"),
        u(0, "BRAM_18K"),
        u(1, "BRAM_18K"),
        p.fps
    );
}
