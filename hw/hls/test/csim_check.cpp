// Drives the kernels' C-simulation libraries through af_sim_abi.h, as the device runtime
// does (dlopen, one thread per kernel, bounded blocking FIFOs).
// Usage: csim_check MODE NAME=<lib.so>=<kernel.json>...
//   dma_round_trip  random buffers through dma_in -> FIFO -> dma_out are bit-exact
//   link_loop       send -> recv over a looped stream, acks per iteration (modes 0, 1, 2)
//   link_pair       two CUs each of send and recv cross-connected as on two cards
//   forward         every beat (data, keep, last) passes; free-running restarts per packet
//   backpressure    a full FIFO blocks the writer (it does not grow); teardown ends the run
//   tie_off         the sink drains every beat and counts it in memory; the source sends none
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <random>
#include <thread>

#include "sim_runtime.h"

using namespace simtest;

namespace {

constexpr uint32_t kWordBytes = 64;

struct buffer {
    std::size_t bytes;
    uint8_t* p;
    explicit buffer(std::size_t n) : bytes((n + 4095) / 4096 * 4096), p(static_cast<uint8_t*>(std::aligned_alloc(4096, bytes))) {}
    ~buffer() { std::free(p); }
    void fill_random(std::mt19937_64& rng) {
        for (std::size_t i = 0; i < bytes; i++) p[i] = static_cast<uint8_t>(rng());
    }
};

// Runs a kernel on its own thread; `rc` / `error` hold the outcome after join().
struct runner {
    int32_t rc = -1;
    std::string error;
    std::thread t;
    runner(kernel_lib* k, std::vector<af_arg> args) {
        t = std::thread([this, k, args] {
            rc = k->run(args.data(), static_cast<uint32_t>(args.size()));
            error = k->error();
        });
    }
    void join() { t.join(); }
};

// The kernel named `name`, or the only one whose name starts with `name_` (a variant such as
// dma_in_w64).
kernel_lib* need(std::map<std::string, kernel_lib*>& ks, const char* name) {
    auto it = ks.find(name);
    if (it != ks.end()) return it->second;
    for (auto& [n, k] : ks) {
        if (n.rfind(std::string(name) + "_", 0) == 0) return k;
    }
    throw std::runtime_error(std::string("kernel ") + name + " not given");
}

uint32_t beat_bytes_arg = 64;  // TDATA bytes of the DMA stream (dma_round_trip BYTES)

void dma_round_trip(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* in = need(ks, "dma_in");
    kernel_lib* out = need(ks, "dma_out");
    std::mt19937_64 rng(20260);
    const std::size_t sizes[] = {64, 4096, 64 * 1000 + 37, 1, 200000 + 3};
    int variant = 0;
    for (std::size_t size : sizes) {
        buffer src(size), dst(size);
        src.fill_random(rng);
        std::memset(dst.p, 0xa5, dst.bytes);
        const uint32_t bb = beat_bytes_arg;
        fifo f("dma_in.out->dma_out.in", bb, 16);
        f.keep_log = true;
        std::vector<af_arg> a_in = {memory("mem", src.p, src.bytes), stream("out", f), scalar("size", size)};
        std::vector<af_arg> a_out = {scalar("size", size), stream("in", f), memory("mem", dst.p, dst.bytes)};
        if (variant++ % 2) {
            // positional: the runtime may pass no names, in signature order
            a_in = {memory(nullptr, src.p, src.bytes), stream(nullptr, f), scalar(nullptr, size)};
        }
        runner r_in(in, a_in), r_out(out, a_out);
        r_in.join();
        r_out.join();
        EXPECT(r_in.rc == 0, "dma_in size %zu: %s", size, r_in.error.c_str());
        EXPECT(r_out.rc == 0, "dma_out size %zu: %s", size, r_out.error.c_str());
        EXPECT(f.errors().empty(), "%s", f.errors().c_str());
        EXPECT(std::memcmp(src.p, dst.p, size) == 0, "size %zu: dma_out's buffer differs from dma_in's", size);
        bool tail_kept = true;
        for (std::size_t i = size; i < (size + kWordBytes - 1) / kWordBytes * kWordBytes; i++) tail_kept &= dst.p[i] == 0xa5;
        EXPECT(tail_kept, "size %zu: bytes after `size` in the last word were overwritten", size);
        const auto log = f.log();
        const std::size_t beats = (size + bb - 1) / bb;
        EXPECT(log.size() == beats, "size %zu: %zu beats, expected %zu", size, log.size(), beats);
        EXPECT(f.max_fill() <= 16, "FIFO grew past its depth");
        for (std::size_t i = 0; i < log.size(); i++) {
            const bool final_beat = i + 1 == log.size();
            const std::size_t valid = final_beat ? size - i * bb : bb;
            const uint64_t keep = valid >= 64 ? ~uint64_t(0) : (uint64_t(1) << valid) - 1;
            EXPECT(log[i].last == (final_beat ? 1 : 0), "size %zu beat %zu: tlast %d", size, i, log[i].last);
            EXPECT(log[i].keep == keep, "size %zu beat %zu: tkeep %llx, expected %llx", size, i,
                   (unsigned long long)log[i].keep, (unsigned long long)keep);
        }
        std::printf("dma round trip: %zu bytes, %zu beats of %u bytes, FIFO peak %zu of 16\n", size, beats, bb, f.max_fill());
    }
}

void link_loop(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* send = need(ks, "send");
    kernel_lib* recv = need(ks, "recv");
    std::mt19937_64 rng(48);
    const unsigned chunks = 50, frame = 8, iterations = 20;
    const unsigned byte_size = chunks * kWordBytes;
    for (unsigned ack_mode : {0u, 1u, 2u}) {
        buffer src(byte_size), dst(byte_size);
        src.fill_random(rng);
        std::memset(dst.p, 0, dst.bytes);
        fifo data("send.data_output->recv.data_input", kWordBytes, 32);
        fifo loop_ack("recv.loopback_ack_stream->send.loopback_ack_stream", 1, 4);
        fifo pair_ack("recv.pair_ack_stream->send.pair_ack_stream", 1, 4);
        data.keep_log = true;
        // send may not start iteration n before it has read n acknowledges
        std::size_t acks_read_at_violation = 0;
        bool ahead = false;
        fifo& ack = ack_mode == 0 ? loop_ack : pair_ack;
        if (ack_mode != 2) {
            data.on_write = [&](std::size_t k) {
                const std::size_t n = k / chunks;
                if (n > ack.reads()) ahead = true, acks_read_at_violation = ack.reads();
            };
        }
        runner r_send(send, {stream("data_output", data), memory("data_input", src.p, src.bytes), scalar("byte_size", byte_size),
                             scalar("frame_size", frame), scalar("iterations", iterations), scalar("ack_mode", ack_mode),
                             stream("loopback_ack_stream", loop_ack), stream("pair_ack_stream", pair_ack)});
        runner r_recv(recv, {stream("data_input", data), memory("data_output", dst.p, dst.bytes), scalar("byte_size", byte_size),
                             scalar("iterations", iterations), scalar("ack_mode", ack_mode),
                             stream("loopback_ack_stream", loop_ack), stream("pair_ack_stream", pair_ack)});
        r_send.join();
        r_recv.join();
        EXPECT(r_send.rc == 0, "send, ack_mode %u: %s", ack_mode, r_send.error.c_str());
        EXPECT(r_recv.rc == 0, "recv, ack_mode %u: %s", ack_mode, r_recv.error.c_str());
        EXPECT(data.errors().empty() && loop_ack.errors().empty() && pair_ack.errors().empty(), "%s%s%s",
               data.errors().c_str(), loop_ack.errors().c_str(), pair_ack.errors().c_str());
        EXPECT(std::memcmp(src.p, dst.p, byte_size) == 0, "ack_mode %u: recv's buffer differs from send's", ack_mode);
        EXPECT(data.writes() == chunks * iterations, "ack_mode %u: %zu beats", ack_mode, data.writes());
        const std::size_t want_loop = ack_mode == 0 ? iterations : 0, want_pair = ack_mode == 1 ? iterations : 0;
        EXPECT(loop_ack.writes() == want_loop && loop_ack.reads() == want_loop, "ack_mode %u: loopback acks %zu/%zu", ack_mode,
               loop_ack.writes(), loop_ack.reads());
        EXPECT(pair_ack.writes() == want_pair && pair_ack.reads() == want_pair, "ack_mode %u: pair acks %zu/%zu", ack_mode,
               pair_ack.writes(), pair_ack.reads());
        EXPECT(!ahead, "ack_mode %u: send started an iteration with only %zu acks read", ack_mode, acks_read_at_violation);
        const auto log = data.log();
        std::size_t lasts = 0;
        bool placed = true;
        for (std::size_t k = 0; k < log.size(); k++) {
            const std::size_t i = k % chunks;
            const bool want = ((i + 1) % frame) == 0 || i + 1 == chunks;
            lasts += log[k].last;
            placed &= (log[k].last == 1) == want && log[k].keep == ~uint64_t(0);
        }
        EXPECT(placed, "ack_mode %u: tlast not every %u beats and at the end of each iteration, or tkeep not all ones", ack_mode, frame);
        std::printf("link loop ack_mode %u: %u iterations x %u beats, %zu tlast, acks %zu\n", ack_mode, iterations, chunks, lasts,
                    ack.writes());
    }
}

// AuroraFlow's pair set-up on two cards, in one process: two CUs of each kernel from the
// same libraries (send_0 -> recv_1 and send_1 -> recv_0, acknowledges over the pair
// streams: recv_0 -> send_1, recv_1 -> send_0), all four running at once.
void link_pair(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* send = need(ks, "send");
    kernel_lib* recv = need(ks, "recv");
    std::mt19937_64 rng(2);
    const unsigned chunks = 40, frame = 0, iterations = 25, byte_size = chunks * kWordBytes;
    buffer src0(byte_size), src1(byte_size), dst0(byte_size), dst1(byte_size);
    src0.fill_random(rng);
    src1.fill_random(rng);
    fifo d01("send_0->recv_1", kWordBytes, 16), d10("send_1->recv_0", kWordBytes, 16);
    fifo a_r0_s1("recv_0.pair_ack->send_1", 1, 2), a_r1_s0("recv_1.pair_ack->send_0", 1, 2);
    fifo l_s0("send_0.loopback_ack", 1, 2), l_s1("send_1.loopback_ack", 1, 2);
    fifo l_r0("recv_0.loopback_ack", 1, 2), l_r1("recv_1.loopback_ack", 1, 2);
    d01.keep_log = d10.keep_log = true;
    auto send_args = [&](fifo& data, buffer& src, fifo& loop, fifo& pair) {
        return std::vector<af_arg>{stream("data_output", data), memory("data_input", src.p, src.bytes),
                                   scalar("byte_size", byte_size), scalar("frame_size", frame), scalar("iterations", iterations),
                                   scalar("ack_mode", 1), stream("loopback_ack_stream", loop), stream("pair_ack_stream", pair)};
    };
    auto recv_args = [&](fifo& data, buffer& dst, fifo& loop, fifo& pair) {
        return std::vector<af_arg>{stream("data_input", data), memory("data_output", dst.p, dst.bytes),
                                   scalar("byte_size", byte_size), scalar("iterations", iterations), scalar("ack_mode", 1),
                                   stream("loopback_ack_stream", loop), stream("pair_ack_stream", pair)};
    };
    runner s0(send, send_args(d01, src0, l_s0, a_r1_s0)), s1(send, send_args(d10, src1, l_s1, a_r0_s1));
    runner r0(recv, recv_args(d10, dst0, l_r0, a_r0_s1)), r1(recv, recv_args(d01, dst1, l_r1, a_r1_s0));
    for (runner* r : {&s0, &s1, &r0, &r1}) r->join();
    EXPECT(s0.rc == 0 && s1.rc == 0 && r0.rc == 0 && r1.rc == 0, "send_0 '%s' send_1 '%s' recv_0 '%s' recv_1 '%s'", s0.error.c_str(),
           s1.error.c_str(), r0.error.c_str(), r1.error.c_str());
    EXPECT(std::memcmp(src0.p, dst1.p, byte_size) == 0, "recv_1 did not receive send_0's buffer");
    EXPECT(std::memcmp(src1.p, dst0.p, byte_size) == 0, "recv_0 did not receive send_1's buffer");
    EXPECT(a_r0_s1.writes() == iterations && a_r1_s0.writes() == iterations, "pair acks %zu / %zu", a_r0_s1.writes(),
           a_r1_s0.writes());
    EXPECT(l_s0.writes() + l_s1.writes() + l_r0.writes() + l_r1.writes() == 0, "a loopback ack was written in ack_mode 1");
    bool no_last = true;
    for (const auto& b : d01.log()) no_last &= b.last == 0;
    for (const auto& b : d10.log()) no_last &= b.last == 0;
    EXPECT(no_last, "frame_size 0 must send no TLAST");
    std::printf("link pair: 2 x send + 2 x recv CUs from one library each, %u iterations x %u beats, %zu + %zu acks\n", iterations,
                chunks, a_r0_s1.writes(), a_r1_s0.writes());
}

void forward(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* fwd = need(ks, "forward");
    std::mt19937_64 rng(7);
    fifo in("in", kWordBytes, 8), out("out", kWordBytes, 8);
    std::vector<beat> sent;
    std::size_t packets = 0;
    for (int i = 0; i < 300; i++) {
        beat b;
        b.data.resize(kWordBytes);
        for (auto& x : b.data) x = static_cast<uint8_t>(rng());
        b.keep = rng();
        b.last = (rng() % 5 == 0) || i == 299;
        packets += b.last;
        sent.push_back(b);
    }
    // free-running: called again after every return, until the runtime tears it down
    std::size_t calls = 0;
    std::string last_error;
    std::thread t([&] {
        const std::vector<af_arg> args = {stream("in", in), stream("out", out)};
        while (fwd->run(args.data(), 2) == 0) calls++;
        last_error = fwd->error();
    });
    std::thread feeder([&] {
        for (const auto& b : sent) {
            EXPECT(in.wait_until([](std::size_t, std::size_t n) { return n < 8; }), "input FIFO never drained");
            in.push(b);
        }
    });
    std::vector<beat> got;
    for (std::size_t i = 0; i < sent.size(); i++) {
        beat b;
        if (!out.pop(b)) break;
        got.push_back(b);
    }
    feeder.join();
    in.close();
    out.close();
    t.join();
    EXPECT(got.size() == sent.size(), "%zu of %zu beats came out", got.size(), sent.size());
    for (std::size_t i = 0; i < std::min(got.size(), sent.size()); i++) {
        EXPECT(got[i].data == sent[i].data && got[i].keep == sent[i].keep && got[i].last == sent[i].last,
               "beat %zu differs (keep %llx/%llx last %d/%d)", i, (unsigned long long)got[i].keep,
               (unsigned long long)sent[i].keep, got[i].last, sent[i].last);
    }
    EXPECT(calls == packets, "%zu completed calls for %zu packets", calls, packets);
    EXPECT(last_error.find("torn down") != std::string::npos, "teardown error: '%s'", last_error.c_str());
    std::printf("forward: %zu beats in %zu packets, one call per packet\n", got.size(), packets);
}

void tie_off(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* sink = need(ks, "tie_off_sink");
    kernel_lib* source = need(ks, "tie_off_source");
    // the source: one call returns at once, having written nothing
    fifo tx("out", kWordBytes, 4);
    const std::vector<af_arg> src_args = {stream("out", tx)};
    EXPECT(source->run(src_args.data(), 1) == 0, "tie_off_source failed: %s", source->error());
    EXPECT(tx.writes() == 0, "tie_off_source wrote %zu beats", tx.writes());
    // the sink: free-running, one beat per call, the count in one 64-bit word of memory
    buffer count(8);
    std::memset(count.p, 0, count.bytes);
    fifo rx("in", kWordBytes, 4);
    const std::size_t beats = 37;
    std::atomic<std::size_t> calls{0};
    std::string last_error;
    std::thread t([&] {
        const std::vector<af_arg> args = {stream("in", rx), memory("count", count.p, count.bytes)};
        while (sink->run(args.data(), 2) == 0) calls++;
        last_error = sink->error();
    });
    std::mt19937_64 rng(11);
    for (std::size_t i = 0; i < beats; i++) {
        beat b;
        b.data.resize(kWordBytes);
        for (auto& x : b.data) x = static_cast<uint8_t>(rng());
        b.keep = ~0ull;
        b.last = i % 8 == 7;
        rx.push(b);
    }
    EXPECT(rx.wait_until([&](std::size_t, std::size_t n) { return n == 0; }), "the sink did not drain its input");
    // the last call returns after its pop: wait for it before tearing the stream down
    for (int i = 0; i < 1000 && calls < beats; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT(calls == beats, "%zu calls for %zu beats", calls.load(), beats);
    rx.close();
    t.join();
    uint64_t counted = 0;
    std::memcpy(&counted, count.p, sizeof counted);
    EXPECT(counted == beats, "the sink counted %llu of %zu beats", (unsigned long long)counted, beats);
    EXPECT(last_error.find("torn down") != std::string::npos, "teardown error: '%s'", last_error.c_str());
    std::printf("tie_off: source wrote 0 beats; sink drained and counted %llu beats in %zu calls\n",
                (unsigned long long)counted, calls.load());
}

void backpressure(std::map<std::string, kernel_lib*>& ks) {
    kernel_lib* in = need(ks, "dma_in");
    const std::size_t depth = 4, size = 100 * kWordBytes;
    buffer src(size);
    std::mt19937_64 rng(3);
    src.fill_random(rng);
    fifo f("out", kWordBytes, depth);
    runner r(in, {memory("mem", src.p, src.bytes), stream("out", f), scalar("size", size)});
    // nobody reads: the writer must stop at the depth and wait inside the FIFO
    EXPECT(f.wait_until([&](std::size_t w, std::size_t) { return w == depth; }), "writes never reached the depth");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT(f.writes() == depth && f.size() == depth, "%zu writes into a FIFO of depth %zu", f.writes(), depth);
    EXPECT(f.blocked_writers() == 1, "the kernel is not waiting in write (%d waiters)", f.blocked_writers());
    beat b;
    EXPECT(f.pop(b) && f.pop(b), "could not drain two beats");
    EXPECT(f.wait_until([&](std::size_t w, std::size_t) { return w == depth + 2; }), "writer did not resume after draining");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT(f.writes() == depth + 2, "%zu writes after draining two", f.writes());
    f.close();
    r.join();
    EXPECT(r.rc != 0, "dma_in returned 0 although its stream was torn down");
    EXPECT(r.error.find("torn down") != std::string::npos, "error after teardown: '%s'", r.error.c_str());
    std::printf("backpressure: writer held at %zu beats, resumed by 2 after draining, teardown: %s\n", depth, r.error.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: csim_check MODE NAME=<lib.so>=<kernel.json>...\n");
        return 2;
    }
    try {
        const std::string mode = argv[1];
        int first = 2;
        if (mode == "dma_round_trip" && std::isdigit(static_cast<unsigned char>(argv[2][0])))
            beat_bytes_arg = static_cast<uint32_t>(std::stoul(argv[first++]));
        auto ks = load_kernels(argc, argv, first);
        if (mode == "dma_round_trip") dma_round_trip(ks);
        else if (mode == "link_loop") link_loop(ks);
        else if (mode == "link_pair") link_pair(ks);
        else if (mode == "forward") forward(ks);
        else if (mode == "backpressure") backpressure(ks);
        else if (mode == "tie_off") tie_off(ks);
        else throw std::runtime_error("unknown mode " + mode);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "FAIL: %s\n", e.what());
        return 1;
    }
    if (failures) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
