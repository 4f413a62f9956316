//! Why the network needs the cards it has: the whole network's resources (every card's layers
//! at the plan's folding, summed) against what one card of the platform allows (its budget,
//! `max_util` of the platform's total, less the AuroraFlow link kernels the partitioner keeps
//! on every card). A resource the network needs more of than one card allows is the reason
//! it is split; the partitioner's own refusal of a one-card plan names the same figures
//! (finn/partitioner `mip.rs`, "the network needs at least ... allow ...").

use std::fmt::Write as _;

use crate::deployment::{Deployment, RESOURCES};
use crate::plan::Plan;
use crate::platform::Platform;
use crate::report::esc;

/// One resource of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub resource: &'static str,
    /// The network's layers on every card, summed.
    pub network: f64,
    /// What one card allows for the network: `budget x total - reserved`.
    pub one_card: f64,
    pub budget: f64,
    pub total: f64,
    pub reserved: f64,
}

impl Row {
    /// The network needs more than one card allows.
    pub fn over(&self) -> bool {
        self.network > self.one_card
    }
}

/// The table's rows, or None for a plan without per-card resources (plans older than the
/// partitioner's `resources`) or a deployment without cards. The budget and the reserve are
/// the first card's (a description with one platform; the cards differ only if the user
/// gives them different `max_util`).
pub fn rows(dep: &Deployment, platform: &Platform, plan: &Plan) -> Option<Vec<Row>> {
    let first = dep.devices.first()?;
    let planned = plan.devices.iter().find(|d| d.name == first.name)?;
    if plan.devices.iter().all(|d| d.resources.is_empty()) {
        return None;
    }
    let sum = |r: &str| -> f64 {
        plan.devices
            .iter()
            .map(|d| d.resources.get(r).copied().unwrap_or(0.0))
            .sum()
    };
    let rows = RESOURCES
        .iter()
        // FINN gives no FF estimate (the partitioner counts FF only with --with-ff)
        .filter(|r| **r != "FF")
        .map(|r| {
            let total = platform.resources.get(*r).copied().unwrap_or(0.0);
            let budget = first.max_util.get(*r).copied().unwrap_or(1.0);
            let reserved = reserved(planned, r);
            Row {
                resource: r,
                network: sum(r),
                one_card: budget * total - reserved,
                budget,
                total,
                reserved,
            }
        })
        .collect();
    Some(rows)
}

fn reserved(d: &crate::plan::DevicePlan, r: &str) -> f64 {
    d.reserved_link_kernels.get(r).copied().unwrap_or(0.0)
}

/// The HTML section: one row per resource, the ones over one card's budget marked, and a
/// sentence saying which resources (if any) make one card too small.
pub fn section(html: &mut String, dep: &Deployment, platform: &Platform, plan: &Plan) {
    let Some(rows) = rows(dep, platform, plan) else {
        return;
    };
    let over: Vec<&Row> = rows.iter().filter(|r| r.over()).collect();
    let verdict = if over.is_empty() {
        "the whole network fits one card's budget".to_string()
    } else {
        let names: Vec<String> = over
            .iter()
            .map(|r| {
                format!(
                    "{} ({:.2} cards' worth)",
                    r.resource,
                    r.network / r.one_card
                )
            })
            .collect();
        format!("one card is not enough: {}", names.join(", "))
    };
    let _ = writeln!(
        html,
        "<h2>The network against one card</h2>\n<p class=\"one-card\">{} (one {} allows its \
         budget of the card's total, less the link kernels kept on every card).</p>\n<table>\
         <tr><th>resource</th><th>network (all cards)</th><th>one card allows</th><th>budget</th>\
         <th>card total</th><th>link kernels</th></tr>",
        esc(&verdict),
        esc(&platform.board)
    );
    for r in &rows {
        let _ = writeln!(
            html,
            "<tr class=\"one-card{}\"><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0} %</td>\
             <td>{:.0}</td><td>{:.0}</td></tr>",
            if r.over() { " over" } else { "" },
            r.resource,
            r.network,
            r.one_card,
            r.budget * 100.0,
            r.total,
            r.reserved
        );
    }
    html.push_str("</table>\n");
}
