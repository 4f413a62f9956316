//! The order in which ready actions start: the action heading the longest chain of actions
//! still to run goes first (list scheduling by critical path, counted in actions: a fresh
//! machine has no durations to weigh them by), ties in the order they became ready.
//!
//! A *leaf* action (height 1: no needed action waits for it, only tests or the build's
//! requested outputs) releases nothing more, so a ready test goes before it
//! (`Sched::next_job`): a long test whose inputs come at the end of a long chain (a nested
//! build of a deployment) then starts as soon as they do, beside the remaining leaves,
//! instead of after every model and test binary of the suite has been built.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use forge_core::ActionId;

/// Each needed action's height: 1 + the largest height of the needed actions that take its
/// outputs, 1 for an action no needed action takes. `deps` maps each needed action to the
/// needed actions producing its inputs. Actions on a cycle keep height 1 (the build refuses
/// them before any runs).
pub(crate) fn heights(deps: &HashMap<ActionId, Vec<ActionId>>) -> HashMap<ActionId, u32> {
    // Kahn's order over producer -> consumer edges; heights are settled in reverse of it.
    let mut consumers: HashMap<ActionId, Vec<ActionId>> = HashMap::new();
    let mut unmet: HashMap<ActionId, usize> = HashMap::new();
    for (id, producers) in deps {
        unmet.insert(*id, producers.len());
        for p in producers {
            consumers.entry(*p).or_default().push(*id);
        }
    }
    let mut order: Vec<ActionId> = unmet
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| *id)
        .collect();
    let mut next = 0;
    while next < order.len() {
        let id = order[next];
        next += 1;
        for c in consumers.get(&id).into_iter().flatten() {
            let n = unmet.get_mut(c).expect("a consumer is a needed action");
            *n -= 1;
            if *n == 0 {
                order.push(*c);
            }
        }
    }
    let mut height: HashMap<ActionId, u32> = deps.keys().map(|id| (*id, 1)).collect();
    for id in order.iter().rev() {
        let h = consumers
            .get(id)
            .into_iter()
            .flatten()
            .map(|c| height[c] + 1)
            .max()
            .unwrap_or(1);
        height.insert(*id, h);
    }
    height
}

/// Ready actions, highest first, then first ready first.
pub(crate) struct ReadyQueue {
    heights: HashMap<ActionId, u32>,
    heap: BinaryHeap<(u32, Reverse<u64>, ActionId)>,
    pushed: u64,
}

impl ReadyQueue {
    pub(crate) fn new(heights: HashMap<ActionId, u32>) -> ReadyQueue {
        ReadyQueue {
            heights,
            heap: BinaryHeap::new(),
            pushed: 0,
        }
    }

    pub(crate) fn push(&mut self, id: ActionId) {
        let h = self.heights.get(&id).copied().unwrap_or(1);
        self.heap.push((h, Reverse(self.pushed), id));
        self.pushed += 1;
    }

    /// The next action to start and its height.
    pub(crate) fn peek(&self) -> Option<(ActionId, u32)> {
        self.heap.peek().map(|(h, _, id)| (*id, *h))
    }

    pub(crate) fn pop(&mut self) -> Option<ActionId> {
        self.heap.pop().map(|(_, _, id)| id)
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

impl Default for ReadyQueue {
    fn default() -> ReadyQueue {
        ReadyQueue::new(HashMap::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(usize, &[usize])]) -> HashMap<ActionId, Vec<ActionId>> {
        edges
            .iter()
            .map(|(id, producers)| {
                (
                    ActionId(*id),
                    producers.iter().map(|p| ActionId(*p)).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_chain_counts_the_actions_below_each() {
        // 0 -> 1 -> 2 -> 3, and 0 -> 4 (a leaf beside the chain)
        let h = heights(&graph(&[
            (0, &[]),
            (1, &[0]),
            (2, &[1]),
            (3, &[2]),
            (4, &[0]),
        ]));
        let got: Vec<u32> = (0..5).map(|i| h[&ActionId(i)]).collect();
        assert_eq!(got, vec![4, 3, 2, 1, 1]);
    }

    #[test]
    fn the_longest_consumer_decides() {
        // 0 feeds the leaf 1 and the chain 2 -> 3 -> 4; 5 feeds 3 too
        let h = heights(&graph(&[
            (0, &[]),
            (1, &[0]),
            (2, &[0]),
            (3, &[2, 5]),
            (4, &[3]),
            (5, &[]),
        ]));
        assert_eq!(h[&ActionId(0)], 4);
        assert_eq!(h[&ActionId(5)], 3);
        assert_eq!(h[&ActionId(1)], 1);
    }

    #[test]
    fn a_cycle_leaves_its_actions_at_one() {
        let h = heights(&graph(&[(0, &[1]), (1, &[0]), (2, &[])]));
        assert_eq!(h[&ActionId(0)], 1);
        assert_eq!(h[&ActionId(1)], 1);
        assert_eq!(h[&ActionId(2)], 1);
    }

    #[test]
    fn higher_first_then_first_ready_first() {
        let h = heights(&graph(&[(0, &[]), (1, &[0]), (2, &[]), (3, &[])]));
        let mut q = ReadyQueue::new(h);
        for id in [2, 3, 0] {
            q.push(ActionId(id));
        }
        assert_eq!(q.peek(), Some((ActionId(0), 2)));
        let order: Vec<usize> = std::iter::from_fn(|| q.pop()).map(|id| id.0).collect();
        assert_eq!(order, vec![0, 2, 3]);
    }
}
