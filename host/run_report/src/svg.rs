//! Small inline SVG charts (no scripts, no external files): horizontal bars, step lines
//! over time, a histogram.

use std::fmt::Write as _;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `x` with thousands separators and `decimals` places: 4460.92 -> "4,460.92".
pub fn grouped(x: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, x.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// One bar per (label, used, budget) in fractions of the device; the budget as a red mark.
pub fn util_bars(rows: &[(String, f64, Option<f64>)]) -> String {
    let (w, bar_w, row_h) = (560.0, 300.0, 18.0);
    let h = row_h * rows.len() as f64 + 6.0;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    for (i, (name, used, budget)) in rows.iter().enumerate() {
        let y = 3.0 + row_h * i as f64;
        let _ = write!(
            s,
            r##"<g class="util-bar" data-resource="{n}"><text x="0" y="{ty}">{n}</text><rect x="70" y="{y}" width="{bar_w}" height="12" fill="#fff" stroke="#999"/><rect x="70" y="{y}" width="{uw:.1}" height="12" fill="#48c"/>"##,
            n = esc(name),
            ty = y + 10.0,
            uw = bar_w * used.clamp(0.0, 1.0)
        );
        if let Some(b) = budget {
            let bx = 70.0 + bar_w * b.clamp(0.0, 1.0);
            let _ = write!(
                s,
                r##"<line x1="{bx:.1}" y1="{y0}" x2="{bx:.1}" y2="{y1}" stroke="#c33" stroke-width="2"/>"##,
                y0 = y - 2.0,
                y1 = y + 14.0
            );
        }
        let label = match budget {
            Some(b) => format!("{:.1} % (budget {:.0} %)", used * 100.0, b * 100.0),
            None => format!("{:.1} %", used * 100.0),
        };
        let _ = write!(
            s,
            r#"<text x="{tx}" y="{ty}" font-size="9">{label}</text></g>"#,
            tx = 70.0 + bar_w + 4.0,
            ty = y + 10.0
        );
    }
    s.push_str("</svg>");
    s
}

pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    /// SVG stroke-dasharray, "" for a solid line
    pub dash: &'a str,
    pub points: Vec<(f64, f64)>,
}

/// Step lines over a shared x axis (time), each series scaled to the common y range.
pub fn step_chart(
    class: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> String {
    let (w, h, l, r, t, b) = (640.0, 200.0, 60.0, 120.0, 24.0, 34.0);
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= 0.0 {
        y1 = 1.0;
    }
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - r);
    let py = |y: f64| h - b - y / y1 * (h - t - b);
    let mut s = format!(
        r##"<svg class="{class}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10"><text x="{l}" y="14" font-size="12" font-weight="bold">{title}</text><line x1="{l}" y1="{yb}" x2="{xr}" y2="{yb}" stroke="#333"/><line x1="{l}" y1="{t}" x2="{l}" y2="{yb}" stroke="#333"/><text x="{l}" y="{xl}">{x0:.3}</text><text x="{xr}" y="{xl}" text-anchor="end">{x1:.3} {xlab}</text><text x="{yl}" y="{yb}" text-anchor="end">0</text><text x="{yl}" y="{yt}" text-anchor="end">{ymax}</text><text x="4" y="{ym}" transform="rotate(-90 10 {ym})">{ylab}</text>"##,
        title = esc(title),
        yb = h - b,
        xr = w - r,
        xl = h - b + 14.0,
        xlab = esc(x_label),
        yl = l - 4.0,
        yt = t + 4.0,
        ymax = grouped(y1, 0),
        ym = h / 2.0,
        ylab = esc(y_label)
    );
    for (i, se) in series.iter().enumerate() {
        let mut d = String::new();
        for (k, &(x, y)) in se.points.iter().enumerate() {
            if k == 0 {
                let _ = write!(d, "M {:.1} {:.1}", px(x), py(y));
            } else {
                // a step: the counter holds until the next sample
                let _ = write!(d, " H {:.1} V {:.1}", px(x), py(y));
            }
        }
        let _ = write!(
            s,
            r##"<path class="series" data-series="{n}" d="{d}" fill="none" stroke="{c}" stroke-width="1.5" stroke-dasharray="{dash}"/><rect x="{lx}" y="{ly}" width="10" height="3" fill="{c}"/><text x="{tx}" y="{ty}">{n}</text>"##,
            n = esc(se.name),
            c = se.color,
            dash = se.dash,
            lx = w - r + 8.0,
            ly = t + 14.0 * i as f64,
            tx = w - r + 22.0,
            ty = t + 4.0 + 14.0 * i as f64
        );
    }
    s.push_str("</svg>");
    s
}

/// A histogram of `values` (in `unit`, already scaled) over `bins` equal bins.
pub fn histogram(class: &str, title: &str, unit: &str, values: &[f64], bins: usize) -> String {
    let (w, h, l, b, t) = (640.0, 220.0, 50.0, 36.0, 24.0);
    let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if !lo.is_finite() {
        (0.0, 1.0)
    } else if hi - lo < 1e-12 * lo.abs().max(1.0) {
        (lo * 0.999, lo * 1.001 + 1e-12)
    } else {
        (lo, hi)
    };
    let bins = bins.max(1);
    let mut counts = vec![0usize; bins];
    for &v in values {
        let k = (((v - lo) / (hi - lo)) * bins as f64) as usize;
        counts[k.min(bins - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bw = (w - l - 20.0) / bins as f64;
    let mut s = format!(
        r##"<svg class="{class}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="10" data-count="{n}"><text x="{l}" y="14" font-size="12" font-weight="bold">{title}</text><line x1="{l}" y1="{yb}" x2="{xr}" y2="{yb}" stroke="#333"/><text x="{l}" y="{xl}">{lo:.4}</text><text x="{xr}" y="{xl}" text-anchor="end">{hi:.4} {unit}</text><text x="{yl}" y="{yt}" text-anchor="end">{top}</text><text x="{yl}" y="{yb}" text-anchor="end">0</text>"##,
        title = esc(title),
        n = values.len(),
        yb = h - b,
        xr = w - 20.0,
        xl = h - b + 14.0,
        unit = esc(unit),
        yl = l - 4.0,
        yt = t + 4.0
    );
    for (k, &c) in counts.iter().enumerate() {
        let bh = c as f64 / top * (h - t - b);
        let _ = write!(
            s,
            r##"<rect class="bin" data-count="{c}" x="{x:.1}" y="{y:.1}" width="{bw1:.1}" height="{bh:.1}" fill="#48c"><title>{a:.4}–{z:.4} {unit}: {c}</title></rect>"##,
            x = l + bw * k as f64,
            y = h - b - bh,
            bw1 = (bw - 1.0).max(0.5),
            a = lo + (hi - lo) * k as f64 / bins as f64,
            z = lo + (hi - lo) * (k + 1) as f64 / bins as f64,
            unit = esc(unit)
        );
    }
    s.push_str("</svg>");
    s
}
