//! Bounded AXI-Stream FIFOs between simulated kernels: blocking push/pop with timeouts, so
//! backpressure reaches a producer as in hardware and no wait is unbounded.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// One AXI-Stream beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beat {
    pub data: Vec<u8>,
    pub keep: u64,
    pub last: bool,
}

impl Beat {
    pub fn new(data: Vec<u8>) -> Beat {
        let keep = if data.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << data.len()) - 1
        };
        Beat {
            data,
            keep,
            last: false,
        }
    }
}

struct State {
    queue: VecDeque<Beat>,
    /// The producer finished: pops drain what is left, then see the end.
    closed: bool,
    /// The run is torn down: every wait returns this error.
    failed: Option<String>,
}

/// An AXI4-Stream data width converter on the stream (v++ inserts one where the link
/// configuration joins ports of different widths): bytes in, beats of `to_bytes` out, byte
/// order kept. Null bytes (TKEEP low) are not passed on, as AXI4-Stream allows (ARM IHI 0051A
/// "null bytes"); TLAST ends the output beat early, with TKEEP marking its valid bytes.
struct Converter {
    from_bits: u32,
    to_bytes: usize,
    /// Bytes received that do not fill an output beat yet.
    residual: Vec<u8>,
}

pub struct StreamFifo {
    pub name: String,
    pub depth: usize,
    state: Mutex<State>,
    changed: Condvar,
    converter: Option<Mutex<Converter>>,
}

/// Bytes of `beat` whose TKEEP bit is set (bytes past the 64 the mask covers count as kept).
fn kept_bytes(beat: &Beat) -> impl Iterator<Item = u8> + '_ {
    beat.data
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= 64 || beat.keep >> i & 1 == 1)
        .map(|(_, b)| *b)
}

/// A beat of `width` bytes holding `bytes` (fewer: zero-padded, TKEEP on the valid ones).
fn beat_of(bytes: &[u8], width: usize, last: bool) -> Beat {
    let mut data = bytes.to_vec();
    data.resize(width, 0);
    let mut b = Beat::new(data);
    if bytes.len() < 64 {
        b.keep = (1u64 << bytes.len()) - 1;
    }
    b.last = last;
    b
}

impl StreamFifo {
    pub fn new(name: impl Into<String>, depth: usize) -> StreamFifo {
        StreamFifo {
            name: name.into(),
            depth: depth.max(1),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                closed: false,
                failed: None,
            }),
            changed: Condvar::new(),
            converter: None,
        }
    }

    /// A stream whose producer port is `from_bits` wide and whose consumer port is
    /// `to_bits` wide, with the width converter between them.
    pub fn with_converter(
        name: impl Into<String>,
        depth: usize,
        from_bits: u32,
        to_bits: u32,
    ) -> Result<StreamFifo> {
        let name = name.into();
        if from_bits == 0
            || to_bits == 0
            || !from_bits.is_multiple_of(8)
            || !to_bits.is_multiple_of(8)
        {
            bail!("stream {name}: width converter {from_bits} -> {to_bits} bits: both widths must be whole bytes");
        }
        let mut f = StreamFifo::new(name, depth);
        f.converter = Some(Mutex::new(Converter {
            from_bits,
            to_bytes: to_bits as usize / 8,
            residual: Vec::new(),
        }));
        Ok(f)
    }

    pub fn push(&self, beat: Beat, timeout: Duration) -> Result<()> {
        let Some(conv) = &self.converter else {
            return self.enqueue(beat, timeout);
        };
        let out: Vec<Beat> = {
            let mut c = conv.lock().unwrap();
            let width = c.to_bytes;
            c.residual.extend(kept_bytes(&beat));
            let whole = c.residual.len() / width * width;
            let mut out: Vec<Beat> = c
                .residual
                .drain(..whole)
                .collect::<Vec<u8>>()
                .chunks(width)
                .map(|w| beat_of(w, width, false))
                .collect();
            if beat.last {
                if !c.residual.is_empty() {
                    let rest = std::mem::take(&mut c.residual);
                    out.push(beat_of(&rest, width, true));
                } else if let Some(b) = out.last_mut() {
                    b.last = true;
                }
            }
            out
        };
        for b in out {
            self.enqueue(b, timeout)?;
        }
        Ok(())
    }

    fn enqueue(&self, beat: Beat, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("stream {}: {e}", self.name);
            }
            if s.queue.len() < self.depth {
                s.queue.push_back(beat);
                self.changed.notify_all();
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                bail!(
                    "stream {}: full for {timeout:?}, its consumer does not read",
                    self.name
                );
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap().0;
        }
    }

    /// The next beat, or None once the producer closed the stream and it is drained.
    pub fn pop(&self, timeout: Duration) -> Result<Option<Beat>> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("stream {}: {e}", self.name);
            }
            if let Some(b) = s.queue.pop_front() {
                self.changed.notify_all();
                return Ok(Some(b));
            }
            if s.closed {
                return Ok(None);
            }
            let now = Instant::now();
            if now >= deadline {
                bail!(
                    "stream {}: empty for {timeout:?}, its producer sends nothing",
                    self.name
                );
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap().0;
        }
    }

    /// The producer finished. A width converter still holding part of an output word is an
    /// error: a card's converter emits a word only when it is whole, and without TLAST
    /// nothing ends it, so the consumer would wait there for ever. The simulation does not
    /// push the bytes out; the stream fails (its consumer sees the same error) and so does
    /// the producer's run.
    pub fn close(&self) -> Result<()> {
        let partial = self.converter.as_ref().and_then(|conv| {
            let c = conv.lock().unwrap();
            (!c.residual.is_empty()).then(|| {
                format!(
                    "its producer finished with {} B of a {} B output word in the width \
                     converter ({} -> {} bits); on a card the consumer would wait for the rest \
                     for ever (no TLAST ends the word), so the run is refused: each run must \
                     fill whole output words (the deploy tool gives the DMAs finn-plus \
                     InsertIODMA's width and refuses cuts that do not)",
                    c.residual.len(),
                    c.to_bytes,
                    c.from_bits,
                    c.to_bytes * 8
                )
            })
        });
        let mut s = self.state.lock().unwrap();
        s.closed = true;
        if let Some(why) = &partial {
            s.failed = Some(why.clone());
        }
        self.changed.notify_all();
        match partial {
            Some(why) => bail!("stream {}: {why}", self.name),
            None => Ok(()),
        }
    }

    /// A new run of the producer begins: the stream carries words again after the end of
    /// the previous run (a card's stream has no end; the simulation closes it per run).
    pub fn reopen(&self) {
        let mut s = self.state.lock().unwrap();
        s.closed = false;
        self.changed.notify_all();
    }

    /// After the end of a producer run: waits until the next run reopens the stream (true)
    /// or `stop` is set (false).
    pub fn wait_reopened(&self, stop: &std::sync::atomic::AtomicBool) -> Result<bool> {
        self.wait_for(stop, |s, stopped| {
            if !s.closed || !s.queue.is_empty() {
                Some(true)
            } else {
                stopped.then_some(false)
            }
        })
    }

    /// For a free-running consumer between packets: waits until a beat is queued (true),
    /// or the producer closed the drained stream or `stop` is set (false).
    pub fn wait_beat(&self, stop: &std::sync::atomic::AtomicBool) -> Result<bool> {
        self.wait_for(stop, |s, stopped| {
            if !s.queue.is_empty() {
                Some(true)
            } else {
                (s.closed || stopped).then_some(false)
            }
        })
    }

    /// Waits until `decide` (the state, whether `stop` is set) has an answer, looking at
    /// `stop` every 5 ms; a failed stream is an error.
    fn wait_for(
        &self,
        stop: &std::sync::atomic::AtomicBool,
        decide: impl Fn(&State, bool) -> Option<bool>,
    ) -> Result<bool> {
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("stream {}: {e}", self.name);
            }
            if let Some(answer) = decide(&s, stop.load(std::sync::atomic::Ordering::SeqCst)) {
                return Ok(answer);
            }
            s = self
                .changed
                .wait_timeout(s, Duration::from_millis(5))
                .unwrap()
                .0;
        }
    }

    pub fn fail(&self, why: &str) {
        self.state.lock().unwrap().failed = Some(why.to_string());
        self.changed.notify_all();
    }

    pub fn len(&self) -> usize {
        self.state.lock().unwrap().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    fn drain(f: &StreamFifo) -> Vec<Beat> {
        let mut v = Vec::new();
        while let Some(b) = f.pop(T).unwrap() {
            v.push(b);
        }
        v
    }

    #[test]
    fn downsizer_keeps_byte_order_and_drops_null_bytes() {
        // 64 B beats into 3 B beats (512 -> 24 bits, the DMA into a FINN input of 3 x UINT8).
        let f = StreamFifo::with_converter("t", 1000, 512, 24).unwrap();
        let bytes: Vec<u8> = (0..100u8).collect();
        f.push(Beat::new(bytes[..64].to_vec()), T).unwrap();
        let mut tail = bytes[64..].to_vec();
        tail.resize(64, 0xee); // 36 valid bytes, 28 null bytes (TKEEP low)
        let mut b = Beat::new(tail);
        b.keep = (1 << 36) - 1;
        b.last = true;
        f.push(b, T).unwrap();
        f.close().unwrap();
        let out = drain(&f);
        assert_eq!(out.len(), 34); // 100 bytes = 33 beats of 3 + one of 1
        let joined: Vec<u8> = out.iter().flat_map(|b| b.data.clone()).collect();
        assert_eq!(&joined[..100], &bytes[..]);
        assert!(out.iter().all(|b| b.data.len() == 3));
        assert_eq!(out[33].keep, 0b1);
        assert!(out[33].last && !out[32].last);
    }

    #[test]
    fn upsizer_fills_words() {
        // 1 B beats into 64 B words (a FINN output into the AuroraFlow tx_axis).
        let f = StreamFifo::with_converter("t", 1000, 8, 512).unwrap();
        for i in 0..128u32 {
            f.push(Beat::new(vec![i as u8]), T).unwrap();
        }
        f.close().unwrap();
        let out = drain(&f);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].data, (0..64u8).collect::<Vec<_>>());
        assert_eq!(out[1].data, (64..128u8).collect::<Vec<_>>());
        assert!(out.iter().all(|b| b.keep == u64::MAX && !b.last));
    }

    #[test]
    fn a_partial_word_at_close_fails_the_stream_naming_it_and_the_widths() {
        // 150 B through an 8 -> 512 bit up-sizer: two whole words, 22 B of a third.
        let f = StreamFifo::with_converter("fpga1: finn.m_axis_0 -> dma.in", 1000, 8, 512).unwrap();
        for i in 0..150u32 {
            f.push(Beat::new(vec![i as u8]), T).unwrap();
        }
        let e = f.close().unwrap_err().to_string();
        for want in [
            "fpga1: finn.m_axis_0 -> dma.in",
            "22 B of a 64 B",
            "8 -> 512 bits",
        ] {
            assert!(e.contains(want), "no {want:?} in: {e}");
        }
        // the consumer gets the same error instead of a word the card would never send
        let e2 = f.pop(T).unwrap_err().to_string();
        assert!(e2.contains("22 B of a 64 B"), "{e2}");
    }

    #[test]
    fn a_reopened_stream_carries_the_next_run_and_stop_ends_the_wait() {
        use std::sync::atomic::AtomicBool;
        let f = std::sync::Arc::new(StreamFifo::new("send_0.data_output -> tx_axis", 4));
        let stop = AtomicBool::new(false);
        f.push(Beat::new(vec![1]), T).unwrap();
        f.close().unwrap();
        assert_eq!(drain(&f).len(), 1);
        // the producer's next run: the consumer waiting for it sees the stream open again
        let g = f.clone();
        let next = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            g.reopen();
            g.push(Beat::new(vec![2]), T).unwrap();
            g.close().unwrap();
        });
        assert!(f.wait_reopened(&stop).unwrap());
        assert_eq!(drain(&f)[0].data, vec![2]);
        next.join().unwrap();
        // no further run: stop ends the wait with false
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(!f.wait_reopened(&stop).unwrap());
    }

    #[test]
    fn converter_widths_must_be_whole_bytes() {
        assert!(StreamFifo::with_converter("t", 2, 512, 12).is_err());
    }
}
