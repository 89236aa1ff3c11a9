#include "remat/report/output_file.hpp"

#include "remat/error.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace remat::report {
namespace {

std::string reason()
{
    return std::strerror(errno);
}

void write_through(const std::filesystem::path& target, const std::string& given,
                   const std::function<void(std::ostream&)>& write)
{
    std::ofstream file(target, std::ios::binary | std::ios::out | std::ios::trunc);
    if (!file)
        throw io_error("cannot open " + given + " for writing: " + reason());
    write(file);
    file.flush();
    if (!file)
        throw io_error("cannot write " + given + ": " + reason());
}

// A new file beside `target`, created exclusively (never another process's file).
std::filesystem::path create_temporary(const std::filesystem::path& target, const std::string& given, mode_t mode)
{
    static std::atomic<unsigned> serial{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::filesystem::path temporary = target;
        temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
        const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0) {
            ::close(fd);
            return temporary;
        }
        if (errno != EEXIST)
            throw io_error("cannot create " + given + " (a new file beside it, " + temporary.filename().string() +
                           "): " + reason());
    }
    throw io_error("cannot create a new file beside " + given + ": every temporary name is taken");
}

void replace(const std::filesystem::path& target, const std::string& given, const struct stat* existing,
             const std::function<void(std::ostream&)>& write)
{
    const std::filesystem::path temporary = create_temporary(target, given, 0666);
    try {
        // An existing file keeps its permissions (the new one was made with the umask's).
        if (existing != nullptr && ::chmod(temporary.c_str(), existing->st_mode & 07777) != 0)
            throw io_error("cannot set the permissions of " + given + ": " + reason());
        write_through(temporary, given, write);
        if (std::rename(temporary.c_str(), target.c_str()) != 0)
            throw io_error("cannot replace " + given + ": " + reason());
    } catch (...) {
        std::remove(temporary.c_str());
        throw;
    }
}

} // namespace

void write_file_safely(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write)
{
    if (path.empty())
        throw argument_error("cannot write to \"\": the output path is empty");
    const std::string given = path.string();
    struct stat info{};
    if (::lstat(path.c_str(), &info) != 0) {
        if (errno != ENOENT)
            throw io_error("cannot write " + given + ": " + reason());
        replace(path, given, nullptr, write);
        return;
    }
    std::filesystem::path target = path;
    if (S_ISLNK(info.st_mode)) {
        char* resolved = ::realpath(path.c_str(), nullptr);
        if (resolved == nullptr) {
            if (errno != ENOENT)
                throw io_error("cannot follow the link " + given + ": " + reason());
            write_through(path, given, write); // dangling: creates the file the link names
            return;
        }
        target = resolved;
        std::free(resolved); // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
        if (::stat(target.c_str(), &info) != 0)
            throw io_error("cannot write " + given + ": " + reason());
    }
    if (S_ISDIR(info.st_mode))
        throw io_error("cannot write " + given + ": it is a directory");
    if (S_ISREG(info.st_mode))
        replace(target, given, &info, write);
    else
        write_through(target, given, write); // a device or a FIFO: never replaced by a regular file
}

} // namespace remat::report
