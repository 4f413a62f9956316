//! Text and rows from every rank, collected on rank 0 (or on every rank) in rank order.

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

/// Every rank gets every rank's `text`, in rank order.
pub fn to_all(world: &SimpleCommunicator, text: &str) -> Vec<String> {
    use mpi::collective::CommunicatorCollectives;
    use mpi::datatype::PartitionMut;
    let mine = text.as_bytes();
    let mut counts = vec![0 as mpi::Count; world.size() as usize];
    world.all_gather_into(&(mine.len() as mpi::Count), &mut counts[..]);
    let displs: Vec<mpi::Count> = counts
        .iter()
        .scan(0, |at, c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u8; counts.iter().sum::<mpi::Count>() as usize];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        world.all_gather_varcount_into(mine, &mut part);
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(c, d)| String::from_utf8_lossy(&all[*d as usize..(*d + *c) as usize]).into_owned())
        .collect()
}
