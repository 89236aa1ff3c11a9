#include "remat/hdf5/calibrate.hpp"

#include "raw_file.hpp"
#include "store_probe.hpp"

#include "remat/detail/median.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace remat {
namespace {

constexpr std::size_t block = 4096;

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A RAM slot that a run writes was last touched many steps before, so it is no longer in the caches: the
// host copy is timed into destinations that together span at least this much (more than a core's caches
// hold), each taken in turn. Copying into one buffer again and again measured the cached copy, 2-2.5x
// faster than a slot write for states of a few MiB (docs/stress.md).
constexpr std::uint64_t uncached_span = std::uint64_t{64} << 20;

std::size_t host_copy_destinations(std::uint64_t snapshot_bytes)
{
    return static_cast<std::size_t>(std::max<std::uint64_t>(1, (uncached_span + snapshot_bytes - 1) / snapshot_bytes));
}

// The host copy's destinations besides the read-back buffer, in one anonymous mapping that goes back to the
// system when the calibration ends: from the heap, a sanitizer's quarantine kept the 64 MiB resident, and a
// caller that measures its baseline after calibrating (remat-stress) found it 64 MiB higher.
class copy_destinations {
public:
    copy_destinations(std::size_t count, std::size_t bytes) : count_(count), bytes_(bytes)
    {
        if (count_ == 0)
            return;
        void* p = ::mmap(nullptr, count_ * bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw capacity_error("cannot map " + std::to_string(count_ * bytes_) +
                                 " bytes for the host copy's calibration: " + std::system_category().message(errno));
        data_ = static_cast<std::byte*>(p);
        std::memset(data_, 0, count_ * bytes_); // every page faulted in before any copy is timed
    }
    ~copy_destinations()
    {
        if (data_ != nullptr)
            ::munmap(data_, count_ * bytes_);
    }
    copy_destinations(const copy_destinations&) = delete;
    copy_destinations& operator=(const copy_destinations&) = delete;

    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    /// The destination of the i-th copy, taking them in turn.
    [[nodiscard]] std::byte* at(std::size_t i) const noexcept { return data_ + (i % count_) * bytes_; }

private:
    std::size_t count_;
    std::size_t bytes_;
    std::byte* data_ = nullptr;
};

// The calibration holds three snapshot-sized buffers (the state, its read-back, the baseline's aligned
// buffer) and the host copy's destinations (up to uncached_span more); refused up front when they exceed
// the machine's memory, instead of failing with bad_alloc or pushing the machine into swap.
void require_memory_for(std::uint64_t snapshot_bytes)
{
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    const std::uint64_t physical =
        pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
    const bool too_large = snapshot_bytes > std::numeric_limits<std::size_t>::max() / 4 ||
                           (physical > 0 && 3 * snapshot_bytes + uncached_span > physical);
    if (too_large)
        throw capacity_error(
            "a snapshot of " + std::to_string(snapshot_bytes) +
            " bytes cannot be calibrated here: it needs three buffers of that size (and up to 64 MiB more) in memory, "
            "more than this machine's " +
            std::to_string(physical) + " bytes");
}

std::string os_error(int err = errno)
{
    return std::system_category().message(err);
}

// Bytes that neither compress nor repeat (xorshift), as a state's would.
void fill_like_a_state(std::vector<std::byte>& state)
{
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (std::byte& b : state) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::byte>(x >> 56);
    }
}

// The checks calibrate_disk and time_store_transfers both make first; `caller` and `doing` (what it does in `dir`)
// name the refusal.
void check_timing_arguments(const char* caller, const char* doing, const std::filesystem::path& dir,
                            std::uint64_t snapshot_bytes, int repeats)
{
    if (snapshot_bytes == 0 || repeats < 1)
        throw argument_error(std::string(caller) + " needs snapshot bytes > 0 and repeats >= 1, got " +
                             std::to_string(snapshot_bytes) + " and " + std::to_string(repeats));
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw io_error(std::string("cannot ") + doing + " in " + dir.string() + ": " +
                       (std::filesystem::exists(dir, ec) ? "not a directory" : "no such directory"));
}

// Snapshot bytes as a user's state holds them (in an ordinary, unaligned vector) and the buffer they are read
// back into.
struct state_buffers {
    std::vector<std::byte> state;
    std::vector<std::byte> back;
};

// `verb` ("calibrate", "time") says what the buffers were for when they cannot be had.
state_buffers make_state_buffers(std::size_t bytes, const char* verb)
{
    state_buffers b;
    try {
        b.state.resize(bytes);
        b.back.resize(bytes);
    } catch (const std::bad_alloc&) {
        throw capacity_error("cannot allocate the buffers of " + std::to_string(bytes) + " bytes to " + verb +
                             " snapshots of that size");
    }
    fill_like_a_state(b.state);
    return b;
}

// The temporary files of one calibration, removed however it ends.
struct scratch_files {
    std::filesystem::path store;
    std::filesystem::path raw;
    ~scratch_files()
    {
        std::error_code ec;
        std::filesystem::remove(store, ec);
        std::filesystem::remove(raw, ec);
    }
};

// The baseline: one file written and read sequentially, with O_DIRECT where the file system allows.
class raw_baseline {
public:
    raw_baseline(const std::filesystem::path& file, std::size_t bytes)
        : file_(file), size_((bytes + block - 1) / block * block)
    {
        fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600);
        direct_ = fd_ >= 0;
        if (fd_ < 0)
            fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0)
            throw io_error("cannot create " + file.string() + ": " + os_error());
        void* p = nullptr;
        if (::posix_memalign(&p, block, std::max<std::size_t>(size_, block)) != 0)
            throw capacity_error("cannot allocate the baseline's buffer of " + std::to_string(size_) + " bytes");
        buffer_.reset(static_cast<std::byte*>(p));
    }
    ~raw_baseline() { ::close(fd_); }
    raw_baseline(const raw_baseline&) = delete;
    raw_baseline& operator=(const raw_baseline&) = delete;

    void fill(const std::vector<std::byte>& data) { std::memcpy(buffer_.get(), data.data(), data.size()); }

    double write()
    {
        const double start = now();
        if (const int err = detail::write_all(fd_, buffer_.get(), size_, 0)) {
            throw io_error("raw write to " + file_.string() + " failed: " + os_error(err));
        }
        if (::fdatasync(fd_) != 0)
            throw io_error("fdatasync of " + file_.string() + " failed: " + os_error());
        return now() - start;
    }

    double read()
    {
        detail::drop_page_cache(file_);
        const double start = now();
        std::size_t done = 0;
        if (const int err = detail::read_all(fd_, buffer_.get(), size_, 0, done); err != 0 || done != size_) {
            // err 0: the file ended before the bytes just written to it did.
            throw io_error("raw read of " + file_.string() + " failed: " + os_error(err != 0 ? err : EIO));
        }
        return now() - start;
    }

    [[nodiscard]] bool direct() const noexcept { return direct_; }

private:
    struct free_deleter {
        void operator()(std::byte* p) const noexcept { std::free(p); }
    };
    std::filesystem::path file_;
    std::size_t size_;
    int fd_ = -1;
    bool direct_ = false;
    std::unique_ptr<std::byte, free_deleter> buffer_;
};

} // namespace

disk_calibration calibrate_disk(const std::filesystem::path& dir, std::uint64_t snapshot_bytes, int repeats)
{
    check_timing_arguments("calibrate_disk", "calibrate", dir, snapshot_bytes, repeats);
    require_memory_for(snapshot_bytes);
    const auto bytes = static_cast<std::size_t>(snapshot_bytes);
    const std::string stem = "remat-calibrate-" + std::to_string(::getpid());
    scratch_files files{dir / (stem + ".h5"), dir / (stem + ".raw")};

    auto [state, back] = make_state_buffers(bytes, "calibrate");
    // The host copy's destinations besides `back` (none for states of 64 MiB or more).
    const copy_destinations more_destinations(host_copy_destinations(snapshot_bytes) - 1, bytes);
    const const_bytes src{state.data(), bytes, memory_space::host};
    const mutable_bytes dst{back.data(), bytes, memory_space::host};

    disk_calibration c;
    c.snapshot_bytes = snapshot_bytes;
    c.repeats = repeats;
    {
        // A first round, untimed, allocates the space of both files: the timed rounds overwrite in place.
        detail::store_probe store(files.store, src);
        raw_baseline raw(files.raw, bytes);
        raw.fill(state);
        c.direct_io = store.direct_io();
        c.raw_direct_io = raw.direct();
        (void)raw.write();
        std::vector<double> w, r, rw, rr, copy;
        for (int i = 1; i <= repeats; ++i) {
            // Alternate which goes first, so that neither always finds the disk fresh.
            const bool store_first = i % 2 == 1;
            if (!store_first)
                rw.push_back(raw.write());
            w.push_back(store.write(i, src));
            if (store_first)
                rw.push_back(raw.write());

            if (!store_first)
                rr.push_back(raw.read());
            r.push_back(store.read(i, dst, src));
            std::fill(back.begin(), back.end(), std::byte{0});
            if (store_first)
                rr.push_back(raw.read());

            // `back` was just read into: a destination of its own unless the state alone exceeds the caches.
            std::byte* destination =
                more_destinations.empty() ? back.data() : more_destinations.at(static_cast<std::size_t>(i - 1));
            const double start = now();
            std::memcpy(destination, state.data(), bytes);
            copy.push_back(now() - start);
        }
        c.write_seconds = detail::median(w);
        c.read_seconds = detail::median(r);
        c.raw_write_seconds = detail::median(rw);
        c.raw_read_seconds = detail::median(rr);
        c.host_copy_seconds = detail::median(copy);
    }
    return c;
}

void store_transfer_samples::append(const store_transfer_samples& more)
{
    const bool mine = !write_seconds.empty() || !read_seconds.empty();
    const bool theirs = !more.write_seconds.empty() || !more.read_seconds.empty();
    if (mine && theirs && more.snapshot_bytes != snapshot_bytes)
        throw argument_error("store_transfer_samples of " + std::to_string(snapshot_bytes) +
                             "-byte snapshots cannot take samples of " + std::to_string(more.snapshot_bytes) +
                             " bytes");
    if (!mine)
        snapshot_bytes = more.snapshot_bytes;
    write_seconds.insert(write_seconds.end(), more.write_seconds.begin(), more.write_seconds.end());
    read_seconds.insert(read_seconds.end(), more.read_seconds.begin(), more.read_seconds.end());
}

double store_transfer_samples::rate(const std::vector<double>& seconds) const
{
    double total = 0;
    for (const double s : seconds)
        total += s;
    return total > 0 ? static_cast<double>(snapshot_bytes) * static_cast<double>(seconds.size()) / total : 0;
}

store_transfer_samples time_store_transfers(const std::filesystem::path& dir, std::uint64_t snapshot_bytes, int repeats)
{
    check_timing_arguments("time_store_transfers", "time snapshot transfers", dir, snapshot_bytes, repeats);
    if (snapshot_bytes > std::numeric_limits<std::size_t>::max() / 2)
        throw capacity_error("a snapshot of " + std::to_string(snapshot_bytes) + " bytes cannot be timed here");
    const auto bytes = static_cast<std::size_t>(snapshot_bytes);
    scratch_files files{dir / ("remat-time-store-" + std::to_string(::getpid()) + ".h5"), {}};
    auto [state, back] = make_state_buffers(bytes, "time");
    const const_bytes src{state.data(), bytes, memory_space::host};
    const mutable_bytes dst{back.data(), bytes, memory_space::host};
    store_transfer_samples out;
    out.snapshot_bytes = snapshot_bytes;
    detail::store_probe store(files.store, src);
    for (int i = 1; i <= repeats; ++i) {
        out.write_seconds.push_back(store.write(i, src));
        out.read_seconds.push_back(store.read(i, dst, src));
        std::fill(back.begin(), back.end(), std::byte{0});
    }
    return out;
}

} // namespace remat
