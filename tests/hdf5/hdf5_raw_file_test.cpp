// The HDF5 level's raw transfers (levels/hdf5/src/raw_file.cpp) on their own: parts written at an offset
// are in the file byte for byte (read back with std::ifstream), read back into a different split of parts,
// and hashed as the one-shot XXH64 of all their bytes (itself checked against xxhsum in
// hdf5_checksum_test), across piece boundaries, unaligned sizes and offsets, and the aligned no-copy path;
// a read past the end of the file is an integrity_error, an unopenable file an io_error.
#define BOOST_TEST_MODULE hdf5_raw_file
#include <boost/test/unit_test.hpp>

#include "raw_file.hpp"
#include "scratch_dir.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

namespace {

using bytes = std::vector<std::byte>;
constexpr std::size_t piece = 1 << 20; // the store's smallest transfer piece

bytes pattern(std::uint64_t seed, std::size_t size)
{
    bytes out(size);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (auto& b : out) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::byte>(x >> 56);
    }
    return out;
}

bytes file_bytes(const std::filesystem::path& path, std::uint64_t offset, std::size_t size)
{
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::vector<char> chars(size);
    in.read(chars.data(), static_cast<std::streamsize>(size));
    BOOST_TEST_REQUIRE(static_cast<std::size_t>(in.gcount()) == size);
    bytes out(size);
    std::memcpy(out.data(), chars.data(), size);
    return out;
}

/// `whole` cut into parts of the given sizes (the last takes the rest).
std::vector<std::span<std::byte>> split(bytes& whole, std::vector<std::size_t> sizes)
{
    std::vector<std::span<std::byte>> parts;
    std::size_t at = 0;
    for (const std::size_t s : sizes) {
        parts.emplace_back(whole.data() + at, s);
        at += s;
    }
    parts.emplace_back(whole.data() + at, whole.size() - at);
    return parts;
}

std::uint64_t write_parts(remat::detail::raw_file& file, std::uint64_t offset, bytes& whole,
                          std::vector<std::size_t> sizes)
{
    std::vector<remat::const_bytes> parts;
    for (const auto p : split(whole, std::move(sizes)))
        parts.push_back(remat::host_bytes(std::span<const std::byte>(p)));
    return file.write(offset, remat::const_parts(parts), remat::host_copy);
}

std::uint64_t read_parts(remat::detail::raw_file& file, std::uint64_t offset, bytes& whole,
                         std::vector<std::size_t> sizes)
{
    std::vector<remat::mutable_bytes> parts;
    for (const auto p : split(whole, std::move(sizes)))
        parts.push_back(remat::host_bytes(p));
    return file.read(offset, remat::mutable_parts(parts), remat::host_copy);
}

} // namespace

BOOST_AUTO_TEST_CASE(parts_land_in_the_file_and_come_back_in_any_split)
{
    remat::test::scratch_dir dir;
    const auto path = dir / "raw";
    std::ofstream(path).put('\0'); // raw_file opens an existing file, as the store's HDF5 file is
    remat::detail::raw_file file(path, remat::hdf5_store::io_path::buffered, piece);
    // Sizes around the piece size and the 4096-byte alignment, at an unaligned and an aligned offset.
    const std::vector<std::size_t> sizes = {1, 4095, 4097, piece - 1, piece + 4096 + 3, 3 * piece + 12345};
    std::uint64_t offset = 777;
    for (const std::size_t size : sizes) {
        bytes written = pattern(size, size);
        file.reserve(offset, size);
        const std::uint64_t hash = write_parts(file, offset, written, {size / 3, size / 3});
        BOOST_TEST(hash == remat::detail::xxh64(written.data(), written.size()));
        BOOST_TEST((file_bytes(path, offset, size) == written));
        bytes back(size);
        BOOST_TEST(read_parts(file, offset, back, {size / 2}) == hash);
        BOOST_TEST((back == written));
        offset = (offset + size + 4095) / 4096 * 4096; // the next one aligned
    }
    file.sync();
}

BOOST_AUTO_TEST_CASE(an_aligned_host_buffer_moves_without_a_copy_and_the_same_bytes_arrive)
{
    remat::test::scratch_dir dir;
    const auto path = dir / "raw";
    std::ofstream(path).put('\0');
    remat::detail::raw_file file(path, remat::hdf5_store::io_path::automatic, piece);
    const std::size_t size = 2 * piece + 8192;
    const std::unique_ptr<std::byte, decltype(&std::free)> aligned(
        static_cast<std::byte*>(std::aligned_alloc(4096, size)), &std::free);
    const bytes expected = pattern(7, size);
    std::memcpy(aligned.get(), expected.data(), size);
    const remat::const_bytes one{aligned.get(), size};
    const std::uint64_t hash = file.write(8192, remat::const_parts(&one, 1), remat::host_copy);
    BOOST_TEST(hash == remat::detail::xxh64(expected.data(), size));
    BOOST_TEST((file_bytes(path, 8192, size) == expected));
    std::memset(aligned.get(), 0, size);
    const remat::mutable_bytes into{aligned.get(), size};
    BOOST_TEST(file.read(8192, remat::mutable_parts(&into, 1), remat::host_copy) == hash);
    BOOST_TEST(std::memcmp(aligned.get(), expected.data(), size) == 0);
}

BOOST_AUTO_TEST_CASE(a_read_past_the_end_of_the_file_is_an_integrity_error)
{
    remat::test::scratch_dir dir;
    const auto path = dir / "raw";
    std::ofstream(path).put('\0');
    remat::detail::raw_file file(path, remat::hdf5_store::io_path::buffered, piece);
    bytes written = pattern(1, 10000);
    write_parts(file, 0, written, {});
    bytes back(20000);
    BOOST_CHECK_THROW(read_parts(file, 0, back, {}), remat::integrity_error);
}

BOOST_AUTO_TEST_CASE(a_file_that_cannot_be_opened_is_an_io_error)
{
    remat::test::scratch_dir dir;
    BOOST_CHECK_THROW(remat::detail::raw_file(dir / "missing" / "raw", remat::hdf5_store::io_path::buffered, piece),
                      remat::io_error);
}
