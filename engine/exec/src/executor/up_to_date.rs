//! Whether every action a build needs is already up to date, found by reading only: its key
//! (from the files on disk) has a local action-cache entry whose outputs are all in place.
//! A process that finds the workspace lock held asks this before it waits, so `forge run`
//! of a tool that is already built (a BuildGrid restarted during a build, workers submitted
//! while one runs) proceeds at once instead of waiting for the whole build.
//!
//! Nothing here writes: the digest cache is loaded and updated in memory only, an unreadable
//! cache entry counts as "not up to date" (the build that holds the lock repairs it), and the
//! build log is left to the writer. Outputs and cache entries only ever appear by rename, so a
//! concurrent build can make this answer "no" (then the caller waits) but never show it a
//! half-written file.

use forge_core::{ActionGraph, ArtifactRef};

use super::scheduler::needed_actions;
use crate::action_cache::ActionCache;
use crate::action_key::key_action;
use crate::digest::DigestCache;
use crate::layout::Layout;
use crate::outputs;

/// The number of actions `wanted` needs when every one of them is up to date; `None` when
/// one is not (or cannot be told without building).
pub(crate) fn all_up_to_date(
    layout: &Layout,
    graph: &ActionGraph,
    wanted: &[ArtifactRef],
) -> Option<usize> {
    let needed = needed_actions(graph, &layout.root, wanted).ok()?;
    let digests = DigestCache::load(layout.digest_cache());
    let ac = ActionCache::new(layout.ac_dir());
    for id in needed.keys() {
        let action = graph.actions.get(id.0)?;
        let keyed = key_action(action, &layout.root, &digests).ok()?;
        let cached = ac.read(&keyed.key)?.ok()?;
        let in_place = cached
            .outputs
            .iter()
            .all(|o| outputs::matches(&layout.abs(&o.path), &o.node, &digests));
        if !in_place {
            return None;
        }
    }
    Some(needed.len())
}
