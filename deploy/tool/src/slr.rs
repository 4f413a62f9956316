//! The SLR of each FINN-deployment CU from the plan (finn/partitioner `slr.rs`): the FINN
//! CU where the plan puts its card's layers, when they are one SLR (one kernel, one `slr=`;
//! a CU over several SLRs is left to v++, UG1393 2021.2 "Assigning Compute Units to SLRs"),
//! the input DMA beside the first layer, the output DMA beside the last, a tie-off beside
//! its AuroraFlow CU (which sits on its QSFP's SLR, `instances.rs`). A plan without SLRs
//! (older plans, replica plans) leaves every CU as it was.

use crate::instances::DeviceDesign;
use crate::plan::Plan;

pub fn place(d: &mut DeviceDesign, plan: &Plan) {
    let mine: Vec<&str> = plan
        .layers
        .iter()
        .filter(|l| l.device == d.device)
        .filter_map(|l| l.slr.as_deref())
        .collect();
    let (Some(first), Some(last)) = (mine.first().copied(), mine.last().copied()) else {
        return;
    };
    let one_slr = mine.iter().all(|s| *s == first);
    let finn = format!("finn_{}", d.device);
    let aurora_slr = |port: &str| {
        let af = format!("aurora_flow_{port}");
        d.cus
            .iter()
            .find(|c| c.name == af)
            .and_then(|c| c.slr.clone())
    };
    let mut chosen: Vec<(usize, Option<String>)> = Vec::new();
    for (k, cu) in d.cus.iter().enumerate() {
        let slr = match cu.name.as_str() {
            n if n == finn && one_slr => Some(first.to_string()),
            "dma_in_0" => Some(first.to_string()),
            "dma_out_0" => Some(last.to_string()),
            n => n
                .strip_prefix("tie_off_source_")
                .or_else(|| n.strip_prefix("tie_off_sink_"))
                .and_then(aurora_slr),
        };
        if slr.is_some() && cu.slr.is_none() {
            chosen.push((k, slr));
        }
    }
    for (k, slr) in chosen {
        d.cus[k].slr = slr;
    }
}
