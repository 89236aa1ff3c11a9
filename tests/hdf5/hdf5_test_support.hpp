// Helpers shared by the HDF5 tests: scratch directories, deterministic snapshot contents, raw file edits,
// and facts about a file read through the HDF5 C API directly (independently of remat's own code).
#pragma once

#include "remat/hdf5/inspect.hpp"
#include "remat/store/snapshot_view.hpp"

#include "scratch_dir.hpp"

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat {
/// For test messages.
inline std::ostream& operator<<(std::ostream& os, hdf5_snapshot_status s)
{
    return os << to_string(s);
}
} // namespace remat

namespace remat::test {

/// HDF5 1.10 keeps part of its cache busy after it failed to load a damaged object header and, if its
/// error printing is on when the process exits, prints "infinite loop closing library". Tests that damage
/// headers on purpose turn the printing off for themselves (remat never turns it on):
///     using remat::test::quiet_hdf5;
///     BOOST_TEST_GLOBAL_FIXTURE(quiet_hdf5);
struct quiet_hdf5 {
    quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
};

/// File access properties like the store's (an HDF5 file open twice in one process must be opened alike).
inline hid_t store_like_access()
{
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
    H5Pset_evict_on_close(fapl, 1);
    return fapl;
}

/// Deterministic bytes that differ for every (seed, index): a snapshot's expected contents.
inline std::vector<std::byte> pattern_bytes(std::uint64_t seed, std::size_t size)
{
    std::vector<std::byte> out(size);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    for (std::size_t i = 0; i < size; ++i) {
        x ^= x << 13; // xorshift64
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = static_cast<std::byte>(x >> 56);
    }
    return out;
}

inline const_bytes view(const std::vector<std::byte>& v)
{
    return {v.data(), v.size(), memory_space::host};
}
inline mutable_bytes view(std::vector<std::byte>& v)
{
    return {v.data(), v.size(), memory_space::host};
}

/// XORs one byte of a file with `mask`.
inline void flip_byte(const std::filesystem::path& file, std::uint64_t offset, unsigned char mask = 0x5A)
{
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ static_cast<char>(mask)));
    if (!f)
        throw std::runtime_error("cannot flip byte " + std::to_string(offset) + " of " + file.string());
}

inline std::vector<char> read_file(const std::filesystem::path& file)
{
    std::ifstream f(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Where a dataset's raw bytes start, asked of the HDF5 C API directly (not through remat).
inline std::uint64_t hdf5_data_offset(const std::filesystem::path& file, const std::string& dataset)
{
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        throw std::runtime_error("H5Fopen failed for " + file.string());
    const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    const haddr_t offset = d >= 0 ? H5Dget_offset(d) : HADDR_UNDEF;
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(f);
    if (offset == HADDR_UNDEF)
        throw std::runtime_error("no offset for " + dataset + " in " + file.string());
    return offset;
}

/// Where an object's header starts in the file, from the HDF5 C API.
inline std::uint64_t hdf5_header_address(const std::filesystem::path& file, const std::string& object)
{
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        throw std::runtime_error("H5Fopen failed for " + file.string());
    H5O_info_t info{};
    const herr_t status = H5Oget_info_by_name(f, object.c_str(), &info, H5P_DEFAULT);
    H5Fclose(f);
    if (status < 0)
        throw std::runtime_error("no header address for " + object + " in " + file.string());
    return info.addr;
}

} // namespace remat::test
