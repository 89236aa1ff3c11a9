// The job that tests/mpi/parallel_crash_test.cpp kills and then checks (run under mpirun).
//
//   parallel_crash_child write FILE LOG   writes its pid to LOG.pid.RANK, then rewrites the 4 slots of the file
//                                          in turn, forever: rank 0
//                                          appends "start SLOT STEP" to LOG before each write and "done SLOT
//                                          STEP" once it returned (durably written on every rank)
//   parallel_crash_child check FILE LOG   reopens the file (resume, same decomposition) after the job was
//                                          killed and checks it against LOG; exit 0 when everything holds,
//                                          1 with one line per violation on stderr
//
// After a crash: every snapshot the log calls done and not being overwritten reads back bit for bit; every
// snapshot the file calls complete holds exactly the bytes of the step it names; the reopened level writes
// and reads every slot again.
#include <remat/error.hpp>
#include <remat/mpi/communicator.hpp>
#include <remat/mpi/parallel_hdf5_store.hpp>

#include <mpi.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr remat::slot_t slots = 4;

// Rank r's part: 3000 + 1001 r bytes (parts of different sizes).
std::uint64_t part_bytes(int rank)
{
    return 3000u + 1001u * static_cast<std::uint64_t>(rank);
}

std::vector<std::byte> pattern(int rank, remat::step_t step)
{
    std::vector<std::byte> v(part_bytes(rank));
    std::uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(step + 1) + static_cast<std::uint64_t>(rank);
    for (std::byte& b : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::byte>(x & 0xff);
    }
    return v;
}

void append(const std::string& log, const char* what, remat::slot_t slot, remat::step_t step)
{
    std::FILE* f = std::fopen(log.c_str(), "a");
    if (f == nullptr)
        throw remat::io_error("cannot open " + log);
    std::fprintf(f, "%s %lld %lld\n", what, static_cast<long long>(slot), static_cast<long long>(step));
    std::fflush(f);
    std::fclose(f);
}

int write_forever(const std::string& file, const std::string& log, int rank)
{
    // The test kills the ranks themselves (mpirun keeps them in their own process group): LOG.pid.RANK.
    {
        std::ofstream pid(log + ".pid." + std::to_string(rank));
        pid << getpid() << '\n';
    }
    remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, slots, part_bytes(rank));
    for (remat::step_t step = 0;; ++step) {
        const remat::slot_t slot = step % slots;
        const std::vector<std::byte> bytes = pattern(rank, step);
        if (rank == 0)
            append(log, "start", slot, step);
        MPI_Barrier(MPI_COMM_WORLD); // the log line is written before any rank touches the slot
        if (store.snapshot_bytes(slot) > 0)
            store.release(slot);
        store.write(slot, step, remat::host_bytes(std::span<const std::byte>(bytes)));
        if (rank == 0)
            append(log, "done", slot, step);
    }
}

int check(const std::string& file, const std::string& log, int rank)
{
    // The log's last word on each slot: the step done there, or a write started (and maybe cut short).
    std::map<remat::slot_t, std::pair<std::string, remat::step_t>> last;
    {
        std::ifstream in(log);
        std::string what;
        long long slot = 0;
        long long step = 0;
        while (in >> what >> slot >> step)
            last[slot] = {what, step};
    }
    int failures = 0;
    auto fail = [&](const std::string& why) {
        ++failures;
        std::fprintf(stderr, "rank %d: %s\n", rank, why.c_str());
    };
    remat::mpi::parallel_hdf5_store store(MPI_COMM_WORLD, file, slots, part_bytes(rank),
                                          {.mode = remat::mpi::parallel_hdf5_store::open_mode::resume});
    std::vector<std::byte> got(part_bytes(rank));
    for (remat::slot_t slot = 0; slot < slots; ++slot) {
        const remat::step_t held = store.snapshot_step(slot);
        const auto said = last.find(slot);
        if (said != last.end() && said->second.first == "done" && held != said->second.second)
            fail("slot " + std::to_string(slot) + " was done with x_" + std::to_string(said->second.second) +
                 " but the file holds " + (held < 0 ? std::string("nothing complete") : "x_" + std::to_string(held)));
        if (held < 0)
            continue;
        try {
            store.read(slot, held, remat::host_bytes(std::span<std::byte>(got)));
            if (got != pattern(rank, held))
                fail("slot " + std::to_string(slot) + " reads x_" + std::to_string(held) + " with other bytes");
        } catch (const remat::error& e) {
            fail("slot " + std::to_string(slot) + " (complete, x_" + std::to_string(held) + "): " + e.what());
        }
    }
    // The level is usable again: every slot written and read back.
    for (remat::slot_t slot = 0; slot < slots; ++slot) {
        if (store.snapshot_bytes(slot) > 0)
            store.release(slot);
        const remat::step_t step = 1000 + slot;
        const std::vector<std::byte> bytes = pattern(rank, step);
        store.write(slot, step, remat::host_bytes(std::span<const std::byte>(bytes)));
        store.read(slot, step, remat::host_bytes(std::span<std::byte>(got)));
        if (got != pattern(rank, step))
            fail("slot " + std::to_string(slot) + " rewritten after the crash reads back other bytes");
    }
    int all = failures;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return all == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    const int rank = remat::mpi::rank(MPI_COMM_WORLD);
    int status = 2;
    if (argc == 4) {
        try {
            const std::string mode = argv[1];
            if (mode == "write")
                status = write_forever(argv[2], argv[3], rank);
            else if (mode == "check")
                status = check(argv[2], argv[3], rank);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
            status = 1;
        }
    }
    if (status == 2 && rank == 0)
        std::fprintf(stderr, "usage: parallel_crash_child write|check FILE LOG\n");
    MPI_Finalize();
    return status;
}
