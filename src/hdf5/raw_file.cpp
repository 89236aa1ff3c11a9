#include "raw_file.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include <fcntl.h>
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

// One transfer at a time on a helper thread, so that the caller can prepare the next piece meanwhile.
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
            job_ = j;
            pending_ = true;
            finished_ = false;
        }
        wake_.notify_one();
    }

    result wait()
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [this] { return finished_; });
        return result_;
    }

private:
    void loop()
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return pending_ || stop_; });
            if (stop_)
                return;
            const job j = job_;
            pending_ = false;
            lock.unlock();
            result r;
            if (j.write) {
                r.error = write_all(j.fd, j.buffer, j.size, j.offset);
                r.done = r.error == 0 ? j.size : 0;
            } else {
                r.error = read_all(j.fd, j.buffer, j.size, j.offset, r.done);
            }
            lock.lock();
            result_ = r;
            finished_ = true;
            done_.notify_one();
        }
    }

    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    job job_;
    result result_;
    bool pending_ = false;
    bool finished_ = true;
    bool stop_ = false;
};

// Waits for a transfer still in flight when a copy throws, so that no buffer is freed under the thread.
struct drain_on_exit {
    io_thread& thread;
    bool& in_flight;
    ~drain_on_exit()
    {
        if (in_flight)
            (void)thread.wait();
    }
};

struct short_read {
    std::uint64_t end; // where the file ended
};

} // namespace

struct raw_file::state {
    std::string path;
    hdf5_store::io_path mode;
    std::size_t piece;
    int fd = -1;        // page-cache I/O: tails, small snapshots, fallback
    int direct_fd = -1; // O_DIRECT, or -1
    aligned_buffer buffers[2];
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

    // The aligned part through O_DIRECT, two pieces in flight. 0 or the errno of the failed write.
    int write_direct(std::uint64_t offset, const_bytes src, std::size_t aligned, byte_copier copy, xxh64_state& h,
                     std::uint64_t& failed_at)
    {
        const std::size_t piece_size = std::min(piece, aligned);
        buffers[0].ensure(piece_size);
        if (aligned > piece_size)
            buffers[1].ensure(piece_size);
        bool in_flight = false;
        std::uint64_t in_flight_at = 0;
        drain_on_exit drain{thread, in_flight};
        for (std::size_t pos = 0, i = 0; pos < aligned; ++i) {
            const std::size_t n = std::min(piece_size, aligned - pos);
            std::byte* b = buffers[i & 1].data;
            copy(b, memory_space::host, src.data + pos, src.space, n);
            h.update(b, n);
            if (in_flight) {
                in_flight = false;
                if (const io_thread::result r = thread.wait(); r.error != 0) {
                    failed_at = in_flight_at;
                    return r.error;
                }
            }
            if (n == aligned) { // one piece: no hand-over
                failed_at = offset;
                return write_all(direct_fd, b, n, offset);
            }
            thread.submit({direct_fd, true, b, n, offset + pos});
            in_flight = true;
            in_flight_at = offset + pos;
            pos += n;
        }
        if (in_flight) {
            in_flight = false;
            if (const io_thread::result r = thread.wait(); r.error != 0) {
                failed_at = in_flight_at;
                return r.error;
            }
        }
        return 0;
    }

    std::uint64_t write(std::uint64_t offset, const_bytes src, byte_copier copy)
    {
        xxh64_state h;
        if (!direct_for(offset, src.size)) {
            write_buffered(offset, src, copy, h);
            return h.digest();
        }
        const std::size_t aligned = src.size / block * block;
        std::uint64_t failed_at = 0;
        if (const int err = write_direct(offset, src, aligned, copy, h, failed_at)) {
            if (err == EINVAL && mode == hdf5_store::io_path::automatic) {
                // The file system took O_DIRECT at open but not for this transfer: page-cache I/O from now on.
                drop_direct();
                return write(offset, src, copy);
            }
            throw io_error("writing at offset " + std::to_string(failed_at) + " failed: " + os_error(err));
        }
        if (aligned < src.size)
            write_buffered(offset + aligned, const_bytes{src.data + aligned, src.size - aligned, src.space}, copy, h);
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

    int read_direct(std::uint64_t offset, mutable_bytes dst, std::size_t aligned, byte_copier copy, xxh64_state& h,
                    std::uint64_t& failed_at)
    {
        const std::size_t piece_size = std::min(piece, aligned);
        buffers[0].ensure(piece_size);
        if (aligned > piece_size)
            buffers[1].ensure(piece_size);
        bool in_flight = false;
        drain_on_exit drain{thread, in_flight};
        auto piece_at = [&](std::size_t pos) { return std::min(piece_size, aligned - pos); };
        if (aligned > piece_size) {
            thread.submit({direct_fd, false, buffers[0].data, piece_size, offset});
            in_flight = true;
        }
        for (std::size_t pos = 0, i = 0; pos < aligned; ++i) {
            const std::size_t n = piece_at(pos);
            std::byte* b = buffers[i & 1].data;
            io_thread::result r;
            if (in_flight) {
                in_flight = false;
                r = thread.wait();
            } else {
                r.error = read_all(direct_fd, b, n, offset + pos, r.done);
            }
            if (r.error != 0) {
                failed_at = offset + pos;
                return r.error;
            }
            if (r.done < n)
                throw short_read{offset + pos + r.done};
            if (pos + n < aligned) { // read the next piece while this one is hashed and copied
                thread.submit({direct_fd, false, buffers[(i + 1) & 1].data, piece_at(pos + n), offset + pos + n});
                in_flight = true;
            }
            h.update(b, n);
            copy(dst.data + pos, dst.space, b, memory_space::host, n);
            pos += n;
        }
        return 0;
    }

    std::uint64_t read(std::uint64_t offset, mutable_bytes dst, byte_copier copy)
    {
        try {
            xxh64_state h;
            if (!direct_for(offset, dst.size)) {
                read_buffered(offset, dst, copy, h);
                return h.digest();
            }
            const std::size_t aligned = dst.size / block * block;
            std::uint64_t failed_at = 0;
            if (const int err = read_direct(offset, dst, aligned, copy, h, failed_at)) {
                if (err == EINVAL && mode == hdf5_store::io_path::automatic) {
                    drop_direct();
                    return read(offset, dst, copy);
                }
                throw io_error("reading at offset " + std::to_string(failed_at) + " failed: " + os_error(err));
            }
            if (aligned < dst.size)
                read_buffered(offset + aligned, mutable_bytes{dst.data + aligned, dst.size - aligned, dst.space}, copy,
                              h);
            return h.digest();
        } catch (const short_read& s) {
            throw integrity_error("the file ends at byte " + std::to_string(s.end) +
                                  ", before the snapshot's last byte " + std::to_string(offset + dst.size) +
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
    }
}

raw_file::~raw_file() = default;

std::uint64_t raw_file::write(std::uint64_t offset, const_bytes src, byte_copier copy)
{
    return s_->write(offset, src, copy);
}

std::uint64_t raw_file::read(std::uint64_t offset, mutable_bytes dst, byte_copier copy)
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
