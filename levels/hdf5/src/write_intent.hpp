// The write intent of a remat snapshot file: which slots a writer may be changing the metadata of.
//
// HDF5 writes a flush's metadata blocks one by one, so a process killed inside H5Fflush can leave some of
// them on disk and not others: the link to a new dataset without the dataset's object header (CI run 33),
// a header half rewritten. The store's protocol confines such damage to the slot being written, whose
// previous snapshot the schedule had already released. But a reader cannot tell a header torn that way
// from the loss of a committed snapshot. The write intent tells it: before it changes a slot's metadata,
// the store records the slot here, and clears the record once the write is committed.
//
// The intent lives in the dataset /write_intent, contiguous and allocated when the file is made, whose
// bytes the store rewrites in place with pwrite: changing it changes no HDF5 metadata. Two copies of the
// record, each in its own 512-byte sector, are written alternately, newest sequence wins, each carrying
// an XXH64 of itself: a torn record is never read as valid, and the other copy then speaks. A file without
// /write_intent (made by an older remat) simply names no slot.
#pragma once

#include "remat/hdf5_internal/hdf5_handle.hpp"
#include "remat/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace remat::detail {

inline constexpr const char* write_intent_dataset_name = "write_intent";
inline constexpr std::size_t write_intent_copy_bytes = 512; // one sector per copy
inline constexpr std::size_t write_intent_bytes = 2 * write_intent_copy_bytes;

/// A run of slots [first, end).
struct slot_range {
    slot_t first = -1;
    slot_t end = -1;
    [[nodiscard]] bool holds(slot_t slot) const noexcept { return slot >= first && slot < end; }
};

/// The most runs of slots an earlier, killed run left torn that a record keeps (more are not kept named,
/// so damage there reads as damage: never a loss excused, at worst a false alarm).
inline constexpr std::size_t write_intent_kept_ranges = 24;

/// The slots whose metadata may be torn, none of which holds a committed snapshot: `writing`, those of the
/// write in progress (one slot, or a batch of slot groups being made); `kept`, runs of slots an earlier,
/// killed run left torn and no write has replaced since; and `unsettled`, a slot whose failed write left
/// metadata changes that have not reached the file yet.
struct write_intent {
    std::uint64_t sequence = 0; ///< which record is the newest: 0 for none written
    slot_range writing;
    slot_t unsettled = -1;
    std::vector<slot_range> kept; ///< at most write_intent_kept_ranges

    /// Whether a reader must take damage in `slot` for a write cut short rather than a committed loss.
    [[nodiscard]] bool names(slot_t slot) const noexcept
    {
        if (slot < 0)
            return false;
        if (writing.holds(slot) || slot == unsettled)
            return true;
        for (const slot_range& r : kept)
            if (r.holds(slot))
                return true;
        return false;
    }

    /// Stops naming `slot` among the kept runs (it holds a committed snapshot now), splitting its run; a
    /// split that would exceed write_intent_kept_ranges drops the shorter half.
    void unkeep(slot_t slot);
};

/// One copy's bytes: a tag, the sequence, the slots and the kept runs with their count (little-endian,
/// the runs padded to the maximum), then the XXH64 of all that.
inline constexpr std::size_t write_intent_record_bytes = 8 * (6 + 2 * write_intent_kept_ranges + 1);
static_assert(write_intent_record_bytes <= write_intent_copy_bytes);
std::array<std::byte, write_intent_record_bytes> encode_write_intent(const write_intent& intent) noexcept;
/// The record in `bytes`, or nothing when they hold no intact record.
std::optional<write_intent> decode_write_intent(std::span<const std::byte> bytes);

/// Where in the file the copy that a record of `sequence` goes to starts, from the dataset's offset.
[[nodiscard]] inline std::uint64_t write_intent_copy_offset(std::uint64_t dataset_offset,
                                                            std::uint64_t sequence) noexcept
{
    return dataset_offset + (sequence % 2) * write_intent_copy_bytes;
}

/// Makes /write_intent in a new snapshot file, naming no slot.
void create_write_intent(hid_t file, const std::string& where);

/// A file's write intent: where its bytes lie, and its newest intact record (sequence 0 when none).
struct write_intent_place {
    std::uint64_t offset = 0;
    write_intent latest;
};

/// Reads /write_intent through HDF5; nothing when the file has none or it cannot be read (then no slot is
/// named, and damage is reported as damage).
std::optional<write_intent_place> read_write_intent(hid_t file);

} // namespace remat::detail
