// The snapshot checksum is XXH64 exactly as the reference tool computes it: `xxhsum -H64` (the xxhash
// package, a declared dependency) hashes the same files, so a user can check an extracted snapshot
// without remat. Streaming in any pieces gives the one-shot result.
#define BOOST_TEST_MODULE hdf5_checksum
#include <boost/test/unit_test.hpp>

#include "hdf5_test_support.hpp"

#include "remat/detail/xxh64.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using remat::detail::xxh64;
using remat::detail::xxh64_state;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;

namespace {

// `xxhsum -H64 FILE`'s digest, as a number.
std::uint64_t reference_xxh64(const std::filesystem::path& file)
{
    const std::string command =
        std::string(REMAT_XXHSUM) + " -H64 '" + file.string() + "' 2>/dev/null"; // (stderr: a progress line)
    FILE* pipe = ::popen(command.c_str(), "r");
    BOOST_TEST_REQUIRE(pipe != nullptr);
    char line[512] = {};
    const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
    const int status = ::pclose(pipe);
    BOOST_TEST_REQUIRE(got, "no output from " << command);
    BOOST_TEST_REQUIRE(status == 0, command << " failed (is the xxhash package installed?)");
    BOOST_TEST_REQUIRE(std::isxdigit(static_cast<unsigned char>(line[0])) != 0, command << " printed: " << line);
    return std::stoull(std::string(line).substr(0, 16), nullptr, 16);
}

} // namespace

BOOST_AUTO_TEST_CASE(matches_xxhsum_at_every_length_class)
{
    scratch_dir dir;
    // Around every branch of the algorithm: empty, < 4, < 8, < 32 (no stripes), exact stripes, stripes
    // plus every kind of tail, and large inputs.
    std::vector<std::size_t> lengths = {0,  1,  3,  4,  5,  7,  8,  9,  15,  16,   31,
                                        32, 33, 35, 39, 40, 63, 64, 65, 100, 1000, 4096};
    lengths.push_back((1 << 20) + 13);
    lengths.push_back(7 << 20);
    for (const std::size_t n : lengths) {
        const std::vector<std::byte> data = pattern_bytes(n + 1, n);
        const auto file = dir / ("in" + std::to_string(n));
        std::ofstream(file, std::ios::binary)
            .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(n));
        BOOST_TEST(xxh64(data.data(), n) == reference_xxh64(file), "length " << n);
    }
}

BOOST_AUTO_TEST_CASE(published_value_of_the_empty_input)
{
    // From the XXH64 specification's test vectors.
    BOOST_TEST(xxh64("", 0) == 0xEF46DB3751D8E999ULL);
}

BOOST_AUTO_TEST_CASE(streaming_in_any_pieces_equals_one_shot)
{
    const std::vector<std::byte> data = pattern_bytes(42, 5000);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = std::uniform_int_distribution<std::size_t>(0, data.size())(rng);
        xxh64_state h;
        for (std::size_t pos = 0; pos < n;) {
            const std::size_t piece = std::min(n - pos, std::uniform_int_distribution<std::size_t>(0, 70)(rng));
            h.update(data.data() + pos, piece);
            pos += piece;
        }
        BOOST_TEST_REQUIRE(h.digest() == xxh64(data.data(), n), "length " << n);
    }
    // Seeds matter.
    BOOST_TEST(xxh64(data.data(), 100, 1) != xxh64(data.data(), 100, 0));
}
