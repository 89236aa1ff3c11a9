#include "creation_guard.hpp"

#include "remat/error.hpp"

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace remat::detail {
namespace {

std::string os_error(int err)
{
    return std::system_category().message(err);
}

std::string raced(const std::string& where)
{
    return "cannot create snapshot file " + where +
           ": another process created or replaced it at the same time (one store per file; choose another path)";
}

// Puts `from` at `to` unless something is there already: false when something is.
bool link_without_replacing(const std::string& from, const std::string& to)
{
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
        return true;
    if (errno == EEXIST)
        return false;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        throw io_error("cannot rename " + from + " to " + to + ": " + os_error(errno));
    // A file system without RENAME_NOREPLACE: a hard link never replaces either.
    if (::link(from.c_str(), to.c_str()) != 0) {
        if (errno == EEXIST)
            return false;
        throw io_error("cannot link " + from + " to " + to + ": " + os_error(errno));
    }
    (void)::unlink(from.c_str()); // the file is in place; a leftover name would only be untidy
    return true;
}

} // namespace

std::optional<file_identity> identify_file(const std::filesystem::path& path)
{
    struct stat info{};
    if (::stat(path.c_str(), &info) != 0) {
        if (errno == ENOENT)
            return std::nullopt;
        throw io_error("cannot look up snapshot file " + path.string() + ": " + os_error(errno));
    }
    return file_identity{info.st_dev, info.st_ino};
}

creation_guard::creation_guard(const std::filesystem::path& path, std::optional<file_identity> seen)
    : where_(path.string()), seen_(seen)
{
    if (!seen_)
        return;
    fd_ = ::open(where_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) {
        if (errno == ENOENT)
            throw io_error(raced(where_));
        throw io_error("cannot open " + where_ + " to replace it: " + os_error(errno));
    }
    // HDF5 holds an flock on every file it has open, so a store using the file (here or in another
    // process), another creator about to replace it, or a reader all make this fail.
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(std::exchange(fd_, -1));
        if (err == EWOULDBLOCK)
            throw io_error("refusing to replace " + where_ + " with a snapshot file: " + in_use_elsewhere);
        throw io_error("cannot lock " + where_ + " to replace it: " + os_error(err));
    }
    struct stat locked{};
    const bool same = ::fstat(fd_, &locked) == 0 && file_identity{locked.st_dev, locked.st_ino} == *seen_ &&
                      identify_file(path) == seen_;
    if (!same) {
        ::close(std::exchange(fd_, -1));
        throw io_error(raced(where_));
    }
}

creation_guard::~creation_guard()
{
    if (fd_ >= 0)
        ::close(fd_); // releases the lock, after the rename
}

void creation_guard::install(const std::filesystem::path& temporary)
{
    const std::string from = temporary.string();
    if (!seen_) {
        if (!link_without_replacing(from, where_))
            throw io_error(raced(where_));
        return;
    }
    // Every creator locks the file it replaces, so while the lock is held the path still names it unless
    // something other than remat changed it.
    if (identify_file(where_) != seen_)
        throw io_error(raced(where_));
    if (::rename(from.c_str(), where_.c_str()) != 0)
        throw io_error("cannot rename " + from + " to " + where_ + ": " + os_error(errno));
}

} // namespace remat::detail
