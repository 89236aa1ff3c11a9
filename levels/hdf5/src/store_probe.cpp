#include "store_probe.hpp"

#include "remat/error.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace remat::detail {
namespace {

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

void drop_page_cache(const std::filesystem::path& file)
{
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw io_error("cannot open " + file.string() + ": " + std::system_category().message(errno));
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

store_probe::store_probe(const std::filesystem::path& file, const_bytes src)
    : file_(file), store_(file, level_capacity{1})
{
    store_.write(0, 0, src);
}

double store_probe::write(step_t step, const_bytes src)
{
    store_.release(0);
    const double start = now();
    store_.write(0, step, src);
    return now() - start;
}

double store_probe::read(step_t step, mutable_bytes dst, const_bytes expected)
{
    drop_page_cache(file_);
    const double start = now();
    store_.read(0, step, dst);
    const double seconds = now() - start;
    if (dst.size != expected.size || std::memcmp(dst.data, expected.data, dst.size) != 0)
        throw integrity_error("calibration read back other bytes than it wrote in " + file_.string());
    return seconds;
}

} // namespace remat::detail
