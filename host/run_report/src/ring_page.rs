//! The HTML page of a `bench` run on a ring (hops.json): the ring as the cards sit on their
//! nodes with every cable's traffic, the ring's modelled figures beside the paper's 48-card
//! measurement, and per message size every hop's counters.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::ring::{Hop, Sample};
use crate::svg::{esc, grouped};

/// "fpga12:1" -> ("fpga12", 1).
fn end(s: &str) -> (&str, Option<u32>) {
    match s.rsplit_once(':') {
        Some((d, p)) => (d, p.parse().ok()),
        None => (s, None),
    }
}

/// The cards in ring order: from the first lane's origin, each hop to the card that
/// receives it, the way the words go; cards the walk does not reach follow by name.
fn ring_order(s: &Sample) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    if let Some(lane) = s.lanes.first() {
        let (origin, _) = end(&lane.origin);
        order.push(origin.to_string());
        let mut from = lane.origin.clone();
        while let Some(h) = s.hops.iter().find(|h| h.from == from) {
            if order.contains(&h.device) {
                break;
            }
            order.push(h.device.clone());
            // a pass-through card sends on by its other port
            match s
                .hops
                .iter()
                .find(|n| end(&n.from).0 == h.device && end(&n.from).1 != Some(h.port))
            {
                Some(n) => from = n.from.clone(),
                None => break,
            }
        }
    }
    let mut rest: Vec<&Hop> = s
        .hops
        .iter()
        .filter(|h| !order.contains(&h.device))
        .collect();
    rest.sort_by_key(|h| natural(&h.device));
    for h in rest {
        if !order.contains(&h.device) {
            order.push(h.device.clone());
        }
    }
    order
}

/// Sort key: the name's text, then its trailing number (fpga2 before fpga10).
fn natural(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (text, num) = name.split_at(name.len() - digits);
    (text.to_string(), num.parse().unwrap_or(0))
}

const NODE_COLOURS: [&str; 4] = ["#48c", "#3a3", "#e90", "#a5c"];

/// The ring: one mark per card on a circle, coloured by node, one chord per cable
/// direction with its word count (red where the ends disagree or words were lost).
fn ring_svg(s: &Sample, order: &[String], nodes: &[String]) -> String {
    let n = order.len().max(1);
    let r = (60.0 + 9.0 * n as f64).min(330.0);
    let (cx, cy) = (r + 90.0, r + 60.0);
    let at = |i: usize, radius: f64| {
        let a = std::f64::consts::TAU * i as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
        (cx + radius * a.cos(), cy + radius * a.sin())
    };
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_str(), i))
        .collect();
    let node_of: BTreeMap<&str, &str> = s
        .hops
        .iter()
        .map(|h| (h.device.as_str(), h.host.as_str()))
        .collect();
    let mut svg = format!(
        r#"<svg class="ring" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" font-family="sans-serif" font-size="10">"#,
        w = 2.0 * cx,
        h = 2.0 * cy
    );
    for h in &s.hops {
        let (from, _) = end(&h.from);
        let (Some(&a), Some(&b)) = (index.get(from), index.get(h.device.as_str())) else {
            continue;
        };
        let bad = s.inconsistent.iter().any(|i| {
            i.contains(&format!("{} -> {}:{}", h.from, h.device, h.port))
                || i.starts_with(&format!("{}:{} ", h.device, h.port))
        }) || h.rx_overflow > 0;
        // the two directions of a cable side by side: one just inside the circle, one outside
        let inward = end(&h.from).1.unwrap_or(0) > h.port;
        let radius = if inward { r - 6.0 } else { r + 6.0 };
        let ((x1, y1), (x2, y2)) = (at(a, radius), at(b, radius));
        let _ = write!(
            svg,
            r##"<line class="ring-hop" data-from="{f}" data-to="{d}:{p}" data-rx="{rx}" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{c}" stroke-width="{sw}"><title>{f} -> {d}:{p}: {rx} words</title></line>"##,
            f = esc(&h.from),
            d = esc(&h.device),
            p = h.port,
            rx = h.rx_count,
            c = if bad { "#c33" } else { "#777" },
            sw = if bad { 3 } else { 1 }
        );
    }
    for (i, d) in order.iter().enumerate() {
        let node = node_of.get(d.as_str()).copied().unwrap_or("");
        let colour = nodes
            .iter()
            .position(|x| x == node)
            .map_or("#999", |k| NODE_COLOURS[k % NODE_COLOURS.len()]);
        let (x, y) = at(i, r);
        let (lx, ly) = at(i, r + 28.0);
        let _ = write!(
            svg,
            r##"<g class="ring-card" data-device="{d}" data-node="{nd}"><circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{colour}"/><text x="{lx:.1}" y="{ly:.1}" text-anchor="middle">{d}</text><title>{d} on {nd}</title></g>"##,
            d = esc(d),
            nd = esc(node)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn figures_rows(s: &Sample) -> String {
    let paper = paper::figures();
    let mut rows = String::new();
    let mut row = |quantity: &str, what: String, value: String, source: &str, how: String| {
        let _ = writeln!(
            rows,
            "<tr class=\"figure\" data-quantity=\"{quantity}\" data-source=\"{source}\"><td>{}</td><td class=\"v\">{value}</td><td>{source}</td><td>{}</td></tr>",
            esc(&what),
            esc(&how)
        );
    };
    for l in &s.lanes {
        let hops = l.hops.max(1) as f64;
        row(
            "hop-latency",
            format!("latency per hop, {} -> {}", l.origin, l.receiver),
            format!("{} ns", grouped(l.latency_s * 1e9 / hops, 1)),
            "modelled",
            format!(
                "the ring's first-word latency over its {} hops: Aurora core (PG074, 55 user cycles) + fibre per hop",
                l.hops
            ),
        );
        row(
            "ring-latency",
            format!("ring latency, {} -> {}", l.origin, l.receiver),
            format!("{} µs", grouped(l.latency_s * 1e6, 3)),
            "modelled",
            format!("{} hops, {} B messages", l.hops, s.message_size),
        );
        row(
            "ring-throughput",
            format!("ring throughput, {} -> {}", l.origin, l.receiver),
            format!("{} Gbit/s", grouped(l.throughput_gbit_s, 2)),
            "modelled",
            format!(
                "{} x {} B around the ring: every hop's latency plus the longest hop's stream",
                s.iterations, s.message_size
            ),
        );
    }
    row(
        "ring-throughput",
        format!("ring throughput, {} cards", paper.ring.cards),
        format!("{} Gbit/s", grouped(paper.ring.gbps, 1)),
        "paper-measured",
        format!(
            "average of one {} GiB message around {} U280s",
            paper.ring.message_gib, paper.ring.cards
        ),
    );
    row(
        "hop-latency",
        "link latency (one hop)".into(),
        format!("{} µs", grouped(paper.link.latency_us, 2)),
        "paper-measured",
        "minimum average, HLS send/recv benchmark through an optical switch, its kernels \
         included; the paper gives no per-hop latency of the ring"
            .into(),
    );
    rows
}

fn hop_table(s: &Sample) -> String {
    let mut t = String::from(
        "<table class=\"hops\"><tr><th>cable</th><th>receiving rank</th><th>node</th><th>TX (sender)</th>\
         <th>RX</th><th>frames</th><th>XOFF</th><th>XON</th><th>overflow</th><th>first word, ns</th></tr>\n",
    );
    for h in &s.hops {
        let tx = s
            .hops
            .iter()
            .find(|x| format!("{}:{}", x.device, x.port) == h.from)
            .map_or("?".to_string(), |x| x.tx_count.to_string());
        let _ = writeln!(
            t,
            "<tr class=\"hop\" data-to=\"{d}:{p}\"><td>{f} → {d}:{p}</td><td class=\"v\">{r}</td><td>{n}</td><td class=\"v\">{tx}</td>\
             <td class=\"v\">{rx}</td><td class=\"v\">{fr}</td><td class=\"v\">{xoff}</td><td class=\"v\">{xon}</td><td class=\"v\">{o}</td><td class=\"v\">{ns}</td></tr>",
            f = esc(&h.from),
            d = esc(&h.device),
            p = h.port,
            r = h.rank,
            n = esc(&h.host),
            rx = h.rx_count,
            fr = h.frames,
            xoff = h.xoff,
            xon = h.xon,
            o = h.rx_overflow,
            ns = grouped(s.hop_latency_ns(h), 1)
        );
    }
    t.push_str("</table>\n");
    t
}

/// The page of `samples` (hops.json of one `bench` run) of `deployment`.
pub fn render(deployment: &str, samples: &[Sample]) -> String {
    let mut h = String::new();
    let Some(last) = samples.last() else {
        return "<!DOCTYPE html>\n<html lang=\"en\"><body><p>no message size was benchmarked</p></body></html>\n"
            .into();
    };
    let order = ring_order(last);
    let mut nodes: Vec<String> = Vec::new();
    for d in &order {
        if let Some(hop) = last.hops.iter().find(|x| &x.device == d) {
            if !nodes.contains(&hop.host) {
                nodes.push(hop.host.clone());
            }
        }
    }
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>Ring of {dep}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em;max-width:1100px}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #999;padding:2px 8px}}td.v{{text-align:right;white-space:nowrap}}\
         tr[data-source=\"paper-measured\"]{{background:#fdf3e1}}tr[data-source=\"modelled\"]{{background:#eef3fb}}\
         .bad{{color:#c33;font-weight:bold}}</style></head><body>\n\
         <h1>Ring of {dep}: <code>bench {mode}</code></h1>\n\
         <p class=\"ring-shape\" data-cards=\"{cards}\" data-nodes=\"{nn}\">{cards} cards on {nn} node{plural}, {hops} cable ends</p>\n",
        dep = esc(deployment),
        mode = esc(&last.mode),
        cards = order.len(),
        nn = nodes.len(),
        plural = if nodes.len() == 1 { "" } else { "s" },
        hops = last.hops.len()
    );
    h.push_str("<h2>Figures beside the paper's</h2>\n<table class=\"figures\"><tr><th>quantity</th><th>value</th><th>source</th><th>how</th></tr>\n");
    h.push_str(&figures_rows(last));
    let _ = writeln!(
        h,
        "</table>\n<p>{} B messages x {}. paper-measured: {}.</p>",
        last.message_size,
        last.iterations,
        esc(&paper::figures().citation)
    );
    let _ = writeln!(
        h,
        "<h2>The ring</h2>\n{}\n<p>{}</p>",
        ring_svg(last, &order, &nodes),
        nodes
            .iter()
            .enumerate()
            .map(|(k, n)| format!(
                "<span style=\"color:{}\">●</span> {}",
                NODE_COLOURS[k % NODE_COLOURS.len()],
                esc(n)
            ))
            .collect::<Vec<_>>()
            .join(" · ")
    );
    for (i, s) in samples.iter().enumerate() {
        let exact = s.lanes.iter().all(|l| l.byte_errors == 0);
        let _ = writeln!(
            h,
            "<details class=\"sample\" data-size=\"{size}\"{open}><summary>{size} B x {it}: {payload}; {cables}</summary>\n{table}</details>",
            size = s.message_size,
            it = s.iterations,
            open = if i + 1 == samples.len() { " open" } else { "" },
            payload = if exact {
                "payload bit-exact after the ring".to_string()
            } else {
                "<span class=\"bad\">payload differs</span>".to_string()
            },
            cables = if s.inconsistent.is_empty() {
                "every cable's TX = RX, no overflow".to_string()
            } else {
                format!("<span class=\"bad\">{}</span>", esc(&s.inconsistent.join("; ")))
            },
            table = hop_table(s)
        );
    }
    h.push_str("</body></html>\n");
    h
}
