#include "file_claim.hpp"

#include "remat/error.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace remat::detail {
namespace {

struct identity {
    std::string path; // absolute and normalised
    std::optional<std::pair<dev_t, ino_t>> inode;
};

struct registry {
    std::mutex mutex;
    std::map<std::uint64_t, identity> claims;
    std::uint64_t next_id = 1;
};

registry& claims()
{
    static registry r; // NOLINT: one per process, which is the point
    return r;
}

identity identify(const std::filesystem::path& path)
{
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    if (ec)
        absolute = std::filesystem::absolute(path, ec).lexically_normal();
    identity id{absolute.string(), std::nullopt};
    struct stat info{};
    if (::stat(path.c_str(), &info) == 0)
        id.inode = std::make_pair(info.st_dev, info.st_ino);
    return id;
}

} // namespace

file_claim::file_claim(const std::filesystem::path& path)
{
    identity id = identify(path);
    registry& r = claims();
    const std::lock_guard lock(r.mutex);
    for (const auto& [other, held] : r.claims)
        if (held.path == id.path || (id.inode && held.inode == id.inode))
            throw io_error("snapshot file " + path.string() +
                           " is already open by another hdf5_store in this process (close or destroy that store "
                           "first, or use another file)");
    id_ = r.next_id++;
    r.claims.emplace(id_, std::move(id));
}

file_claim::~file_claim()
{
    release();
}

file_claim::file_claim(file_claim&& other) noexcept : id_(std::exchange(other.id_, 0)) {}

file_claim& file_claim::operator=(file_claim&& other) noexcept
{
    if (this != &other) {
        release();
        id_ = std::exchange(other.id_, 0);
    }
    return *this;
}

void file_claim::refresh()
{
    if (id_ == 0)
        return;
    registry& r = claims();
    const std::lock_guard lock(r.mutex);
    identity& held = r.claims.at(id_);
    held = identify(held.path);
}

void file_claim::release() noexcept
{
    if (id_ == 0)
        return;
    registry& r = claims();
    const std::lock_guard lock(r.mutex);
    r.claims.erase(std::exchange(id_, 0));
}

} // namespace remat::detail
