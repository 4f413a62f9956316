//! Text and rows from every rank, collected on rank 0 in rank order.

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

const TAG: i32 = 7;

/// Rank 0 gets every rank's `text` in rank order; the others get an empty list.
pub fn to_root(world: &SimpleCommunicator, text: String) -> Vec<String> {
    if world.rank() == 0 {
        let mut all = vec![text];
        for r in 1..world.size() {
            let (bytes, _) = world.process_at_rank(r).receive_vec_with_tag::<u8>(TAG);
            all.push(String::from_utf8_lossy(&bytes).into_owned());
        }
        all
    } else {
        world.process_at_rank(0).send_with_tag(text.as_bytes(), TAG);
        Vec::new()
    }
}
