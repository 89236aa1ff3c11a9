// HDF5 disk level throughput against the raw disk, measured in one run: the median time to write a
// snapshot through hdf5_store until it is durable (fdatasync included) and to read it back with the
// file's page cache dropped (posix_fadvise), against a raw sequential O_DIRECT write (one pwrite of the
// whole snapshot, then fdatasync) and read of the same bytes in the same directory. Rounds interleave
// the variants, rotating their order, so that all see the same disk conditions. Goal: >= 80% of the raw
// baseline for 64 MiB snapshots.
//
//     ./build/bench/hdf5_throughput [--dir DIR] [--bytes N] [--repeats N] [--pieces 4,8,16]
//                                   [--buffered] [--aligned] [--compression LEVEL]
//
// --pieces lists transfer piece sizes in MiB (hdf5_store::options::transfer_bytes) to compare;
// --buffered adds the page-cache path; --compression adds a deflate level (much slower: informative);
// --aligned puts the state in 4 KiB-aligned memory (moved without a copy) instead of where a std::vector
// would (copied through the store's aligned pieces). The variants rewrite one slot's dataset in place, as
// `remat calibrate` and a long run's later sweeps do; the last row writes every snapshot into a new slot
// instead (a new dataset in new file space, as a run's first writes into a new file do), for comparison.
#include "program_help.hpp"

#include "bench_util.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/hdf5/hdf5_store.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

using remat::bench::median;
constexpr std::size_t block = 4096;

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void drop_cache(const std::filesystem::path& file)
{
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0)
        return;
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

// The baseline, written here independently of remat's own I/O code.
struct raw_file {
    std::filesystem::path path;
    int fd = -1;
    bool direct = true;
    std::size_t size;
    std::unique_ptr<std::byte, decltype(&std::free)> buffer{nullptr, &std::free};

    raw_file(std::filesystem::path p, std::size_t bytes) : path(std::move(p)), size((bytes + block - 1) / block * block)
    {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
        if (fd < 0) {
            direct = false;
            fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        }
        if (fd < 0) {
            std::perror(path.c_str());
            std::exit(1);
        }
        void* memory = nullptr;
        if (::posix_memalign(&memory, block, size) != 0)
            std::exit(1);
        buffer.reset(static_cast<std::byte*>(memory));
        std::memset(buffer.get(), 0x5A, size);
    }
    ~raw_file()
    {
        ::close(fd);
        std::filesystem::remove(path);
    }
    double write()
    {
        const double start = now();
        if (::pwrite(fd, buffer.get(), size, 0) != static_cast<ssize_t>(size) || ::fdatasync(fd) != 0) {
            std::perror("raw write");
            std::exit(1);
        }
        return now() - start;
    }
    double read()
    {
        drop_cache(path);
        const double start = now();
        if (::pread(fd, buffer.get(), size, 0) != static_cast<ssize_t>(size)) {
            std::perror("raw read");
            std::exit(1);
        }
        return now() - start;
    }
};

struct variant {
    std::string name;
    remat::hdf5_store::options options;
    std::unique_ptr<remat::hdf5_store> store;
    std::filesystem::path path;
    std::vector<double> write, read;
    bool new_slots = false; // each round writes (and reads) slot r, not slot 0 again
};

bool has_flag(int argc, char** argv, const std::string& flag)
{
    for (int i = 1; i < argc; ++i)
        if (argv[i] == flag)
            return true;
    return false;
}

std::vector<std::size_t> parse_list(const char* text)
{
    std::vector<std::size_t> out;
    for (const char* p = text; *p != '\0';) {
        char* end = nullptr;
        out.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != '\0')
            break;
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: hdf5_throughput [--dir DIR] [--bytes N] [--repeats N] [--pieces 4,8,16]\n"
            "           [--buffered] [--aligned] [--compression LEVEL]\n"
            "HDF5 disk level throughput against the raw disk, measured in one run: the median time to write a\n"
            "snapshot through hdf5_store until it is durable (fdatasync included) and to read it back with the\n"
            "file's page cache dropped (posix_fadvise), against a raw sequential O_DIRECT write (one pwrite of\n"
            "the whole snapshot, then fdatasync) and read of the same bytes in the same directory.\n"))
        return 0;
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    std::size_t bytes = std::size_t{64} << 20;
    int repeats = 15;
    std::vector<std::size_t> pieces = {8};
    bool buffered = false;
    int compression = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 == argc && a != "--buffered" && a != "--aligned")
            break;
        if (a == "--dir")
            dir = argv[++i];
        else if (a == "--bytes")
            bytes = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--repeats")
            repeats = std::atoi(argv[++i]);
        else if (a == "--pieces")
            pieces = parse_list(argv[++i]);
        else if (a == "--buffered")
            buffered = true;
        else if (a == "--compression")
            compression = std::atoi(argv[++i]);
    }

    // The state as a user's std::vector holds it (not block-aligned: the store copies through its own
    // aligned pieces), or, with --aligned, in 4 KiB-aligned memory (the store moves it without a copy).
    const bool aligned = has_flag(argc, argv, "--aligned");
    std::unique_ptr<std::byte, decltype(&std::free)> memory(nullptr, &std::free);
    void* raw_memory = nullptr;
    if (::posix_memalign(&raw_memory, block, 2 * bytes + 2 * block) != 0)
        return 1;
    memory.reset(static_cast<std::byte*>(raw_memory));
    std::byte* state_data = memory.get() + (aligned ? 0 : 16); // 16: where malloc'd vectors start
    std::byte* back_data = memory.get() + bytes + block + (aligned ? 0 : 16);
    std::span<std::byte> state(state_data, bytes), back(back_data, bytes);
    for (std::size_t i = 0; i < bytes; ++i)
        state[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
    const remat::const_bytes src{state.data(), bytes, remat::memory_space::host};
    const remat::mutable_bytes dst{back.data(), bytes, remat::memory_space::host};

    std::vector<variant> variants;
    for (const std::size_t mib : pieces)
        variants.push_back(
            {"hdf5, " + std::to_string(mib) + " MiB pieces", {.transfer_bytes = mib << 20}, {}, {}, {}, {}});
    if (buffered)
        variants.push_back({"hdf5, page cache", {.io = remat::hdf5_store::io_path::buffered}, {}, {}, {}, {}});
    if (compression > 0)
        variants.push_back(
            {"hdf5, deflate " + std::to_string(compression), {.compression = compression}, {}, {}, {}, {}});
    variants.push_back({"hdf5, a new slot each",
                        {.transfer_bytes = (pieces.empty() ? 8 : pieces.front()) << 20},
                        {},
                        {},
                        {},
                        {},
                        true});
    const std::string stem = "remat-bench-" + std::to_string(::getpid());
    for (std::size_t v = 0; v < variants.size(); ++v) {
        variants[v].path = dir / (stem + "-" + std::to_string(v) + ".h5");
        const remat::slot_t slots = variants[v].new_slots ? repeats + 1 : 1;
        variants[v].store =
            std::make_unique<remat::hdf5_store>(variants[v].path, remat::level_capacity{slots}, variants[v].options);
        variants[v].store->write(0, 0, src); // untimed: allocates the file's space
    }
    raw_file raw(dir / (stem + ".raw"), bytes);
    (void)raw.write();

    std::vector<double> raw_write, raw_read;
    const std::size_t n = variants.size() + 1;
    for (int r = 1; r <= repeats; ++r) {
        for (std::size_t k = 0; k < n; ++k) { // rotate the order every round
            const std::size_t which = (k + static_cast<std::size_t>(r)) % n;
            if (which == variants.size()) {
                raw_write.push_back(raw.write());
                continue;
            }
            variant& v = variants[which];
            const remat::slot_t slot = v.new_slots ? r : 0;
            if (!v.new_slots)
                v.store->release(0);
            const double start = now();
            v.store->write(slot, r, src);
            v.write.push_back(now() - start);
        }
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t which = (k + static_cast<std::size_t>(r)) % n;
            if (which == variants.size()) {
                raw_read.push_back(raw.read());
                continue;
            }
            variant& v = variants[which];
            drop_cache(v.path);
            const double start = now();
            v.store->read(v.new_slots ? r : 0, r, dst);
            v.read.push_back(now() - start);
            if (!std::equal(back.begin(), back.end(), state.begin())) {
                std::fprintf(stderr, "%s read back other bytes\n", v.name.c_str());
                return 1;
            }
        }
    }

    // Components, for the record: what hashing and copying cost per snapshot on this machine.
    const double hash =
        median(remat::bench::time_runs(5, [&] { remat::bench::keep(remat::detail::xxh64(state.data(), bytes)); }));
    const double copy = median(remat::bench::time_runs(5, [&] { std::memcpy(back.data(), state.data(), bytes); }));

    const double gb = static_cast<double>(bytes) / 1e9;
    const double rw = median(raw_write), rr = median(raw_read);
    std::printf("%zu-byte snapshots in %s, %s state, median of %d rounds (store O_DIRECT: %s, baseline O_DIRECT: "
                "%s)\n",
                bytes, dir.c_str(), aligned ? "4 KiB-aligned" : "std::vector-like (unaligned)", repeats,
                variants.empty() || !variants[0].store->direct_io() ? "no" : "yes", raw.direct ? "yes" : "no");
    std::printf("%-26s %10s %9s %7s %10s %9s %7s\n", "", "write s", "GB/s", "vs raw", "read s", "GB/s", "vs raw");
    std::printf("%-26s %10.4f %9.2f %7s %10.4f %9.2f %7s\n", "raw O_DIRECT (baseline)", rw, gb / rw, "", rr, gb / rr,
                "");
    bool goal = true;
    for (const variant& v : variants) {
        const double w = median(v.write), rd = median(v.read);
        std::printf("%-26s %10.4f %9.2f %6.0f%% %10.4f %9.2f %6.0f%%\n", v.name.c_str(), w, gb / w, 100 * rw / w, rd,
                    gb / rd, 100 * rr / rd);
        if (&v == &variants.front())
            goal = rw / w >= 0.8 && rr / rd >= 0.8;
    }
    std::printf("xxh64 of one snapshot: %.4f s (%.2f GB/s); memcpy: %.4f s (%.2f GB/s)\n", hash, gb / hash, copy,
                gb / copy);
    std::printf("goal (first variant >= 80%% of raw, write and read): %s\n", goal ? "met" : "NOT met");
    for (variant& v : variants) {
        v.store.reset();
        std::filesystem::remove(v.path);
    }
    return 0;
}
