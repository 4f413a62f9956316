//! The HLS app's part of the report: what each cable carries, and a table of every stream
//! (on one card, or over which cable and direction). The cards and their CUs are drawn from
//! the sim descriptions as for every app.

use std::fmt::Write as _;

use crate::deployment::{Deployment, Link};
use crate::report::esc;

/// The streams a cable carries, for its label: `a→b: from→to; ...` (empty when none).
pub fn cable_streams(dep: &Deployment, link: &Link) -> String {
    dep.hls
        .streams
        .iter()
        .filter_map(|s| {
            let c = s.cable.as_ref()?;
            let on = (c.from == link.a && c.to == link.b) || (c.from == link.b && c.to == link.a);
            on.then(|| format!("{}→{}: {} → {}", c.from, c.to, s.from, s.to))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `<h2>Streams</h2>` and a row per `[[stream]]` (nothing for an app without streams).
pub fn streams_table(dep: &Deployment) -> String {
    if dep.hls.streams.is_empty() {
        return String::new();
    }
    let mut html =
        String::from("<h2>Streams</h2>\n<table><tr><th>from</th><th>to</th><th>over</th></tr>\n");
    for s in &dep.hls.streams {
        let over = match &s.cable {
            Some(c) => format!("cable {} → {}", c.from, c.to),
            None => format!("on {} (stream_connect)", s.from.device),
        };
        let _ = writeln!(
            html,
            "<tr class=\"stream\"><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.from.to_string()),
            esc(&s.to.to_string()),
            esc(&over)
        );
    }
    html.push_str("</table>\n");
    html
}
