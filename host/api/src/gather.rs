//! Text and rows from every rank, collected on rank 0 (or on every rank) in rank order,
//! waited for without spinning (`idle`).

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::idle::{self, Backoff};

const TAG: i32 = 7;

/// Rank 0 gets every rank's `text` in rank order; the others get an empty list.
pub fn to_root(world: &SimpleCommunicator, text: String) -> Vec<String> {
    if world.rank() == 0 {
        let mut all = vec![text];
        for r in 1..world.size() {
            let peer = world.process_at_rank(r);
            let mut backoff = Backoff::default();
            let probed = loop {
                match peer.immediate_matched_probe_with_tag(TAG) {
                    Some(p) => break p,
                    None => backoff.pause(),
                }
            };
            let (bytes, _) = probed.matched_receive_vec::<u8>();
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
    let len = mine.len() as mpi::Count;
    mpi::request::scope(|scope| {
        idle::complete(world.immediate_all_gather_into(scope, &len, &mut counts[..]))
    });
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
        mpi::request::scope(|scope| {
            idle::complete(world.immediate_all_gather_varcount_into(scope, mine, &mut part))
        });
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(c, d)| String::from_utf8_lossy(&all[*d as usize..(*d + *c) as usize]).into_owned())
        .collect()
}
