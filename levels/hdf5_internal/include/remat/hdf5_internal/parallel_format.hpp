// The layout of a remat parallel snapshot file (schema 1), written by remat::mpi::parallel_hdf5_store
// (remat::mpi_hdf5, on the MPI build of HDF5) and read by `remat inspect` (remat::hdf5, on the serial one).
// Needs no HDF5 header, so both can share it.
//
//   /                        remat_format = "remat parallel snapshot file", remat_schema = 1,
//                            checksum_algorithm = "xxh64", ranks, slots
//   /decomposition           uint64 [ranks][2]: each rank's offset and bytes in every snapshot dataset
//   /snapshots/slot_NNNNNN   uint8 [sum of the parts], contiguous, allocated when the file is made; attributes
//                            schema, slot, step, bytes, state ("empty", "writing", "complete"), checksums
//                            (uint64 [ranks]: XXH64 of each rank's hyperslab), record_checksum; and when a
//                            rank's state is made of several parts, part_counts (uint64 [ranks]: how many
//                            parts each rank's hyperslab holds, one after the other) and part_bytes
//                            (uint64 [sum of part_counts]: their sizes, rank 0's first), both covered by
//                            record_checksum (a record without them hashes as it always did)
#pragma once

#include "remat/detail/xxh64.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace remat::detail::parallel_format {

inline constexpr const char* format_name = "remat parallel snapshot file";
inline constexpr std::uint32_t schema = 1;
/// Width of the fixed-length `state` strings (so that rewriting a state keeps the attribute's size).
inline constexpr std::size_t state_width = 16;

enum class record_state : std::uint8_t { empty, writing, complete };

inline const char* state_name(record_state s) noexcept
{
    switch (s) {
    case record_state::empty:
        return "empty";
    case record_state::writing:
        return "writing";
    case record_state::complete:
        return "complete";
    }
    return "?";
}

inline std::optional<record_state> parse_state(std::string_view s) noexcept
{
    for (const record_state r : {record_state::empty, record_state::writing, record_state::complete})
        if (s == state_name(r))
            return r;
    return std::nullopt;
}

/// "/snapshots/slot_000003".
inline std::string slot_dataset(slot_t slot)
{
    char name[48];
    std::snprintf(name, sizeof name, "/snapshots/slot_%06lld", static_cast<long long>(slot));
    return name;
}

/// A slot's attributes.
struct record {
    slot_t slot = -1;
    step_t step = -1;
    std::uint64_t bytes = 0; ///< the whole dataset: every rank's part
    record_state state = record_state::empty;
    std::vector<std::uint64_t> checksums; ///< XXH64 of each rank's hyperslab, rank 0 first
    /// How many parts each rank's hyperslab holds, and their sizes (rank 0's first); both empty when every
    /// rank's state is one part.
    std::vector<std::uint64_t> part_counts;
    std::vector<std::uint64_t> part_bytes;

    /// Rank `r`'s part sizes: from part_bytes, or its whole hyperslab `rank_bytes` when the record has
    /// none. Empty when the record's part attributes do not describe `ranks` ranks.
    [[nodiscard]] std::vector<std::uint64_t> parts_of(std::size_t r, std::size_t ranks, std::uint64_t rank_bytes) const
    {
        if (part_counts.empty())
            return {rank_bytes};
        if (part_counts.size() != ranks)
            return {};
        std::uint64_t first = 0;
        for (std::size_t i = 0; i < r; ++i)
            first += part_counts[i];
        if (first + part_counts[r] > part_bytes.size())
            return {};
        return {part_bytes.begin() + static_cast<std::ptrdiff_t>(first),
                part_bytes.begin() + static_cast<std::ptrdiff_t>(first + part_counts[r])};
    }

    /// XXH64 over a tag, the little-endian numbers and the checksums: a record whose attributes were only
    /// partly rewritten never matches it.
    [[nodiscard]] std::uint64_t record_checksum() const noexcept
    {
        xxh64_state h;
        h.update("remat-parallel-record", 21);
        const std::uint64_t numbers[] = {schema, static_cast<std::uint64_t>(slot), static_cast<std::uint64_t>(step),
                                         bytes, static_cast<std::uint64_t>(state)};
        h.update(numbers, sizeof numbers);
        h.update(checksums.data(), checksums.size() * sizeof(std::uint64_t));
        if (!part_counts.empty()) {
            h.update("parts", 5);
            h.update(part_counts.data(), part_counts.size() * sizeof(std::uint64_t));
            h.update(part_bytes.data(), part_bytes.size() * sizeof(std::uint64_t));
        }
        return h.digest();
    }
};

} // namespace remat::detail::parallel_format
