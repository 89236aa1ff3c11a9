#include "raw_file.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace remat::detail {
namespace {

constexpr std::size_t block = 4096;          // O_DIRECT alignment of offsets, lengths and buffers
constexpr std::size_t cache_piece = 1 << 20; // buffered transfers: hash a piece while it is in cache

std::string os_error(int err)
{
    return std::system_category().message(err);
}

std::size_t round_up(std::size_t n)
{
    return (n + block - 1) / block * block;
}

struct aligned_buffer {
    std::byte* data = nullptr;
    std::size_t size = 0;

    aligned_buffer() = default;
    aligned_buffer(const aligned_buffer&) = delete;
    aligned_buffer& operator=(const aligned_buffer&) = delete;
    ~aligned_buffer() { std::free(data); }

    void ensure(std::size_t n)
    {
        n = round_up(std::max<std::size_t>(n, 1));
        if (size >= n)
            return;
        std::free(data);
        data = nullptr;
        size = 0;
        data = static_cast<std::byte*>(std::aligned_alloc(block, n));
        if (data == nullptr)
            throw std::bad_alloc();
        size = n;
    }
};

// Transfers run in order on a helper thread, from a queue: the caller queues the next pieces and goes on
// copying and hashing, and the disk never waits for a hand-over between two pieces.
class io_thread {
public:
    struct job {
        int fd = -1;
        bool write = false;
        std::byte* buffer = nullptr;
        std::size_t size = 0;
        std::uint64_t offset = 0;
    };
    struct result {
        int error = 0;
        std::size_t done = 0;
        std::uint64_t offset = 0;
    };

    io_thread() = default;
    io_thread(const io_thread&) = delete;
    io_thread& operator=(const io_thread&) = delete;
    ~io_thread()
    {
        if (!thread_.joinable())
            return;
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }

    void submit(const job& j)
    {
        if (!thread_.joinable())
            thread_ = std::thread([this] { loop(); });
        {
            std::lock_guard lock(mutex_);
            jobs_.push_back(j);
            ++outstanding_;
        }
        wake_.notify_one();
    }

    /// The result of the oldest transfer not yet waited for (transfers finish in the order queued).
    result wait_oldest()
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [this] { return !results_.empty(); });
        const result r = results_.front();
        results_.pop_front();
        --outstanding_;
        return r;
    }

    /// Waits for every transfer queued; the first error, if any.
    result wait_all()
    {
        result first;
        while (outstanding() > 0) {
            const result r = wait_oldest();
            if (first.error == 0 && r.error != 0)
                first = r;
        }
        return first;
    }

    [[nodiscard]] std::size_t outstanding()
    {
        std::lock_guard lock(mutex_);
        return outstanding_;
    }

private:
    void loop()
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return !jobs_.empty() || stop_; });
            if (jobs_.empty())
                return;
            const job j = jobs_.front();
            jobs_.pop_front();
            lock.unlock();
            result r;
            r.offset = j.offset;
            if (j.write) {
                r.error = write_all(j.fd, j.buffer, j.size, j.offset);
                r.done = r.error == 0 ? j.size : 0;
            } else {
                r.error = read_all(j.fd, j.buffer, j.size, j.offset, r.done);
            }
            lock.lock();
            results_.push_back(r);
            done_.notify_one();
        }
    }

    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::deque<job> jobs_;
    std::deque<result> results_;
    std::size_t outstanding_ = 0;
    bool stop_ = false;
};

// Waits for the transfers still queued when a copy throws, so that no buffer is freed under the thread.
struct drain_on_exit {
    io_thread& thread;
    ~drain_on_exit() { (void)thread.wait_all(); }
};

// The piece of a transfer of `total` bytes that starts at `pos`: small at both ends and up to `largest` in
// between, so that the disk starts early (a write waits for its first piece to be copied) and finishes
// late (a read still has to hash and copy its last piece): each piece is at most what was moved before
// it and half of what remains, and at least `smallest`. Whole O_DIRECT blocks.
std::size_t piece_at(std::size_t pos, std::size_t total, std::size_t largest)
{
    const std::size_t smallest = std::min<std::size_t>(largest, 256 * block); // 1 MiB
    const std::size_t remaining = total - pos;
    std::size_t n = std::min(largest, std::max(smallest, pos));
    n = std::min(n, std::max(smallest, remaining / 2 / block * block));
    return std::min(n, remaining);
}

// Copies host or device bytes into a host piece and hashes them, a cache-sized part at a time, so that each
// byte comes from memory once: the hash reads it from cache right after the copy put it there (about
// twice as fast as hashing a whole piece afterwards, which would read it from memory again).
constexpr std::size_t cache_part = 256 * 1024;

void copy_in_and_hash(std::byte* piece, const std::byte* src, memory_space space, std::size_t n, byte_copier copy,
                      xxh64_state& h)
{
    const std::size_t part = space == memory_space::host ? cache_part : n; // a device copy: one call
    for (std::size_t done = 0; done < n; done += part) {
        const std::size_t m = std::min(part, n - done);
        copy(piece + done, memory_space::host, src + done, space, m);
        h.update(piece + done, m);
    }
}

// The reverse for reads: hash a part of the piece (bringing it into cache), then copy it out.
void hash_and_copy_out(std::byte* dst, memory_space space, const std::byte* piece, std::size_t n, byte_copier copy,
                       xxh64_state& h)
{
    if (space != memory_space::host) {
        h.update(piece, n);
        copy(dst, space, piece, memory_space::host, n);
        return;
    }
    for (std::size_t done = 0; done < n; done += cache_part) {
        const std::size_t m = std::min(cache_part, n - done);
        h.update(piece + done, m);
        copy(dst + done, space, piece + done, memory_space::host, m);
    }
}

// The same for the bytes [pos, pos + n) of parts laid one after the other (a multi-part snapshot): each
// part's share with its own memory space, the hash running on across them.
void gather_and_hash(std::byte* piece, const_parts parts, std::size_t pos, std::size_t n, byte_copier copy,
                     xxh64_state& h)
{
    std::size_t at = 0; // where the current part starts
    for (const const_bytes& p : parts) {
        if (n == 0)
            return;
        if (pos < at + p.size) {
            const std::size_t off = pos - at;
            const std::size_t m = std::min(p.size - off, n);
            copy_in_and_hash(piece, p.data + off, p.space, m, copy, h);
            piece += m;
            pos += m;
            n -= m;
        }
        at += p.size;
    }
}

void hash_and_scatter(mutable_parts parts, std::size_t pos, const std::byte* piece, std::size_t n, byte_copier copy,
                      xxh64_state& h)
{
    std::size_t at = 0;
    for (const mutable_bytes& p : parts) {
        if (n == 0)
            return;
        if (pos < at + p.size) {
            const std::size_t off = pos - at;
            const std::size_t m = std::min(p.size - off, n);
            hash_and_copy_out(p.data + off, p.space, piece, m, copy, h);
            piece += m;
            pos += m;
            n -= m;
        }
        at += p.size;
    }
}

// Calls f(segment, position) for the share of each part that lies in [from, end of the parts).
template <class Parts, class F>
void for_each_segment_from(Parts parts, std::size_t from, F&& f)
{
    std::size_t at = 0;
    for (const auto& p : parts) {
        if (from < at + p.size) {
            const std::size_t off = from > at ? from - at : 0;
            auto segment = p;
            segment.data += off;
            segment.size -= off;
            f(segment, at + off);
        }
        at += p.size;
    }
}

// STATX_DIOALIGN (Linux 6.1): the buffer alignment O_DIRECT needs for this file, or `block` when unknown.
std::size_t direct_memory_alignment(int fd)
{
#ifdef __linux__
    constexpr unsigned dio_align = 0x2000; // STATX_DIOALIGN, which older headers lack
    struct statx st{};
    if (fd >= 0 && ::statx(fd, "", AT_EMPTY_PATH, dio_align, &st) == 0 && (st.stx_mask & dio_align) != 0 &&
        st.stx_dio_mem_align != 0 && st.stx_dio_mem_align <= block &&
        (st.stx_dio_mem_align & (st.stx_dio_mem_align - 1)) == 0)
        return st.stx_dio_mem_align;
#endif
    return block;
}

struct short_read {
    std::uint64_t end; // where the file ended
};

} // namespace

// pwrite until done; 0 or the errno.
int write_all(int fd, const std::byte* p, std::size_t n, std::uint64_t offset)
{
    while (n > 0) {
        const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return EIO;
        p += w;
        n -= static_cast<std::size_t>(w);
        offset += static_cast<std::uint64_t>(w);
    }
    return 0;
}

// pread until done or the end of the file; 0 or the errno, and the bytes read in `done`.
int read_all(int fd, std::byte* p, std::size_t n, std::uint64_t offset, std::size_t& done)
{
    done = 0;
    while (done < n) {
        const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (r == 0)
            return 0;
        done += static_cast<std::size_t>(r);
    }
    return 0;
}

struct raw_file::state {
    std::string path;
    hdf5_store::io_path mode;
    std::size_t piece;
    int fd = -1;        // page-cache I/O: tails, small snapshots, fallback
    int direct_fd = -1; // O_DIRECT, or -1
    // The memory alignment O_DIRECT needs here (STATX_DIOALIGN: 512 on many disks, 4 on most NVMe drives);
    // a caller's buffer aligned so moves without a copy. 4096 when the kernel does not say.
    std::size_t memory_alignment = block;
    static constexpr std::size_t ring = 3; // pieces in flight or being filled
    aligned_buffer buffers[ring];
    aligned_buffer tail;
    io_thread thread;

    ~state()
    {
        if (direct_fd >= 0)
            ::close(direct_fd);
        if (fd >= 0)
            ::close(fd);
    }

    void drop_direct()
    {
        if (direct_fd >= 0)
            ::close(direct_fd);
        direct_fd = -1;
    }

    // One host buffer aligned as O_DIRECT needs here: the disk moves its bytes with no copy through a piece.
    template <class Parts>
    [[nodiscard]] bool takes_straight(Parts parts) const noexcept
    {
        return parts.size() == 1 && parts.front().space == memory_space::host &&
               reinterpret_cast<std::uintptr_t>(parts.front().data) % memory_alignment == 0;
    }

    [[nodiscard]] bool direct_for(std::uint64_t offset, std::size_t size) const
    {
        return direct_fd >= 0 && offset % block == 0 && size >= block;
    }

    // ---- writes ----

    void write_buffered(std::uint64_t offset, const_bytes src, byte_copier copy, xxh64_state& h)
    {
        for (std::size_t pos = 0; pos < src.size;) {
            const std::size_t n = std::min(cache_piece, src.size - pos);
            const std::byte* p = src.data + pos;
            if (src.space != memory_space::host) {
                tail.ensure(n);
                copy(tail.data, memory_space::host, p, src.space, n);
                p = tail.data;
            }
            h.update(p, n);
            if (const int err = write_all(fd, p, n, offset + pos))
                throw io_error("writing " + std::to_string(n) + " bytes at offset " + std::to_string(offset + pos) +
                               " failed: " + os_error(err));
            pos += n;
        }
    }

    // The aligned part through O_DIRECT, up to `ring` pieces queued. 0 or the errno of the failed write.
    int write_direct(std::uint64_t offset, const_parts parts, std::size_t aligned, byte_copier copy, xxh64_state& h,
                     std::uint64_t& failed_at)
    {
        const std::size_t piece_size = std::min(piece, aligned);
        failed_at = offset;
        if (piece_at(0, aligned, piece_size) == aligned) { // one piece: no hand-over
            if (takes_straight(parts)) {                   // and no copy
                h.update(parts.front().data, aligned);
                return write_all(direct_fd, parts.front().data, aligned, offset);
            }
            buffers[0].ensure(aligned);
            gather_and_hash(buffers[0].data, parts, 0, aligned, copy, h);
            return write_all(direct_fd, buffers[0].data, aligned, offset);
        }
        drain_on_exit drain{thread};
        const const_bytes src = parts.front();
        if (takes_straight(parts)) {
            // The caller's buffer is aligned as O_DIRECT needs: the disk takes the bytes straight from it,
            // and the hash reads them meanwhile. No copy.
            for (std::size_t pos = 0; pos < aligned;) {
                const std::size_t n = piece_at(pos, aligned, piece_size);
                thread.submit({direct_fd, true, const_cast<std::byte*>(src.data + pos), n, offset + pos});
                h.update(src.data + pos, n);
                pos += n;
            }
            const io_thread::result r = thread.wait_all();
            failed_at = r.offset;
            return r.error;
        }
        for (aligned_buffer& b : buffers)
            b.ensure(piece_size);
        for (std::size_t pos = 0, i = 0; pos < aligned; ++i) {
            // The buffer of piece i was last used by piece i - ring: wait for that one.
            if (i >= ring) {
                if (const io_thread::result r = thread.wait_oldest(); r.error != 0) {
                    failed_at = r.offset;
                    return r.error;
                }
            }
            const std::size_t n = piece_at(pos, aligned, piece_size);
            std::byte* b = buffers[i % ring].data;
            gather_and_hash(b, parts, pos, n, copy, h);
            thread.submit({direct_fd, true, b, n, offset + pos});
            pos += n;
        }
        const io_thread::result r = thread.wait_all();
        failed_at = r.offset;
        return r.error;
    }

    // The parts' bytes from `from` on through the page cache, part by part.
    void write_parts_buffered(std::uint64_t offset, const_parts parts, std::size_t from, byte_copier copy,
                              xxh64_state& h)
    {
        for_each_segment_from(parts, from, [&](const const_bytes& segment, std::size_t pos) {
            write_buffered(offset + pos, segment, copy, h);
        });
    }

    std::uint64_t write(std::uint64_t offset, const_parts parts, byte_copier copy)
    {
        xxh64_state h;
        const std::size_t size = total_bytes(parts);
        if (!direct_for(offset, size)) {
            write_parts_buffered(offset, parts, 0, copy, h);
            return h.digest();
        }
        const std::size_t aligned = size / block * block;
        std::uint64_t failed_at = 0;
        if (const int err = write_direct(offset, parts, aligned, copy, h, failed_at)) {
            if (err == EINVAL && mode == hdf5_store::io_path::automatic) {
                // The file system took O_DIRECT at open but not for this transfer: page-cache I/O from now on.
                drop_direct();
                return write(offset, parts, copy);
            }
            throw io_error("writing at offset " + std::to_string(failed_at) + " failed: " + os_error(err));
        }
        if (aligned < size)
            write_parts_buffered(offset, parts, aligned, copy, h);
        return h.digest();
    }

    // ---- reads ----

    void read_buffered(std::uint64_t offset, mutable_bytes dst, byte_copier copy, xxh64_state& h)
    {
        for (std::size_t pos = 0; pos < dst.size;) {
            const std::size_t n = std::min(cache_piece, dst.size - pos);
            std::byte* p = dst.data + pos;
            if (dst.space != memory_space::host) {
                tail.ensure(n);
                p = tail.data;
            }
            std::size_t done = 0;
            if (const int err = read_all(fd, p, n, offset + pos, done))
                throw io_error("reading " + std::to_string(n) + " bytes at offset " + std::to_string(offset + pos) +
                               " failed: " + os_error(err));
            if (done < n)
                throw short_read{offset + pos + done};
            h.update(p, n);
            if (p != dst.data + pos)
                copy(dst.data + pos, dst.space, p, memory_space::host, n);
            pos += n;
        }
    }

    // The aligned part through O_DIRECT, up to `ring` pieces queued ahead of the one being hashed and copied.
    int read_direct(std::uint64_t offset, mutable_parts parts, std::size_t aligned, byte_copier copy, xxh64_state& h,
                    std::uint64_t& failed_at)
    {
        const std::size_t piece_size = std::min(piece, aligned);
        if (piece_at(0, aligned, piece_size) == aligned) { // one piece: no hand-over
            const bool straight = takes_straight(parts);   // into the caller's buffer: no copy
            std::byte* into = parts.front().data;
            if (!straight) {
                buffers[0].ensure(aligned);
                into = buffers[0].data;
            }
            std::size_t done = 0;
            if (const int err = read_all(direct_fd, into, aligned, offset, done)) {
                failed_at = offset;
                return err;
            }
            if (done < aligned)
                throw short_read{offset + done};
            if (straight)
                h.update(into, aligned);
            else
                hash_and_scatter(parts, 0, into, aligned, copy, h);
            return 0;
        }
        drain_on_exit drain{thread};
        const mutable_bytes dst = parts.front();
        if (takes_straight(parts)) {
            // An aligned destination takes the bytes straight from the disk; each piece is hashed while the
            // next ones are read. No copy.
            std::size_t queued_pos = 0;
            for (std::size_t k = 0; k < ring && queued_pos < aligned; ++k) {
                const std::size_t n = piece_at(queued_pos, aligned, piece_size);
                thread.submit({direct_fd, false, dst.data + queued_pos, n, offset + queued_pos});
                queued_pos += n;
            }
            for (std::size_t pos = 0; pos < aligned;) {
                const std::size_t n = piece_at(pos, aligned, piece_size);
                const io_thread::result r = thread.wait_oldest();
                if (r.error != 0) {
                    failed_at = r.offset;
                    return r.error;
                }
                if (r.done < n)
                    throw short_read{offset + pos + r.done};
                if (queued_pos < aligned) {
                    const std::size_t m = piece_at(queued_pos, aligned, piece_size);
                    thread.submit({direct_fd, false, dst.data + queued_pos, m, offset + queued_pos});
                    queued_pos += m;
                }
                h.update(dst.data + pos, n);
                pos += n;
            }
            return 0;
        }
        for (aligned_buffer& b : buffers)
            b.ensure(piece_size);
        std::size_t queued_pos = 0, queued = 0; // what has been queued so far
        auto queue_next = [&] {
            const std::size_t n = piece_at(queued_pos, aligned, piece_size);
            thread.submit({direct_fd, false, buffers[queued % ring].data, n, offset + queued_pos});
            queued_pos += n;
            ++queued;
        };
        while (queued < ring && queued_pos < aligned)
            queue_next();
        for (std::size_t pos = 0, i = 0; pos < aligned; ++i) {
            const std::size_t n = piece_at(pos, aligned, piece_size);
            const io_thread::result r = thread.wait_oldest();
            if (r.error != 0) {
                failed_at = r.offset;
                return r.error;
            }
            if (r.done < n)
                throw short_read{offset + pos + r.done};
            hash_and_scatter(parts, pos, buffers[i % ring].data, n, copy, h);
            pos += n;
            if (queued_pos < aligned) // the buffer just emptied takes the next piece
                queue_next();
        }
        return 0;
    }

    void read_parts_buffered(std::uint64_t offset, mutable_parts parts, std::size_t from, byte_copier copy,
                             xxh64_state& h)
    {
        for_each_segment_from(parts, from, [&](const mutable_bytes& segment, std::size_t pos) {
            read_buffered(offset + pos, segment, copy, h);
        });
    }

    std::uint64_t read(std::uint64_t offset, mutable_parts parts, byte_copier copy)
    {
        const std::size_t size = total_bytes(parts);
        try {
            xxh64_state h;
            if (!direct_for(offset, size)) {
                read_parts_buffered(offset, parts, 0, copy, h);
                return h.digest();
            }
            const std::size_t aligned = size / block * block;
            std::uint64_t failed_at = 0;
            if (const int err = read_direct(offset, parts, aligned, copy, h, failed_at)) {
                if (err == EINVAL && mode == hdf5_store::io_path::automatic) {
                    drop_direct();
                    return read(offset, parts, copy);
                }
                throw io_error("reading at offset " + std::to_string(failed_at) + " failed: " + os_error(err));
            }
            if (aligned < size)
                read_parts_buffered(offset, parts, aligned, copy, h);
            return h.digest();
        } catch (const short_read& s) {
            throw integrity_error("the file ends at byte " + std::to_string(s.end) +
                                  ", before the snapshot's last byte " + std::to_string(offset + size) +
                                  " (truncated)");
        }
    }
};

raw_file::raw_file(const std::filesystem::path& path, hdf5_store::io_path mode, std::size_t piece_bytes)
    : s_(std::make_unique<state>())
{
    s_->path = path.string();
    s_->mode = mode;
    s_->piece = std::max(block, piece_bytes / block * block);
    s_->fd = ::open(s_->path.c_str(), O_RDWR | O_CLOEXEC);
    if (s_->fd < 0)
        throw io_error("cannot open " + s_->path + " for snapshot data: " + os_error(errno));
    if (mode != hdf5_store::io_path::buffered) {
        s_->direct_fd = ::open(s_->path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
        if (s_->direct_fd < 0 && mode == hdf5_store::io_path::direct)
            throw io_error("cannot open " + s_->path + " with O_DIRECT (io_path::direct): " + os_error(errno));
        s_->memory_alignment = direct_memory_alignment(s_->direct_fd);
    }
}

raw_file::~raw_file() = default;

std::uint64_t raw_file::write(std::uint64_t offset, const_parts src, byte_copier copy)
{
    return s_->write(offset, src, copy);
}

std::uint64_t raw_file::read(std::uint64_t offset, mutable_parts dst, byte_copier copy)
{
    return s_->read(offset, dst, copy);
}

void raw_file::sync()
{
    while (::fdatasync(s_->fd) != 0) {
        if (errno != EINTR)
            throw io_error("fdatasync of " + s_->path + " failed: " + os_error(errno));
    }
}

void raw_file::reserve(std::uint64_t offset, std::uint64_t size)
{
    if (size == 0)
        return;
    while (::fallocate(s_->fd, 0, static_cast<off_t>(offset), static_cast<off_t>(size)) != 0) {
        const int err = errno;
        if (err == EINTR)
            continue;
        if (err == EOPNOTSUPP || err == ENOSYS)
            return; // the write itself will report a full disk
        throw io_error("cannot reserve " + std::to_string(size) + " bytes at offset " + std::to_string(offset) + ": " +
                       os_error(err));
    }
}

bool raw_file::direct() const noexcept
{
    return s_->direct_fd >= 0;
}

} // namespace remat::detail
