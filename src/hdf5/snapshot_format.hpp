// The layout of a remat snapshot file (schema 1), shared by the store and by inspection.
//
//   /                       attributes remat_format = "remat snapshot file", remat_schema = 1,
//                           checksum_algorithm = "xxh64"
//   /snapshots/slot_NNNNNN  one dataset per slot ever written: rank 1, element type as chosen,
//                           contiguous (or chunked + shuffle + deflate when compressed); attributes
//                           schema, slot, step, bytes, element_type, checksum, state, record_checksum
//
// `record_checksum` is the XXH64 of the other attributes, so a record whose attributes were only partly
// rewritten (a process killed between two metadata writes) is never taken for a valid one.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/store/detail/hdf5_handle.hpp"
#include "remat/store/hdf5_store.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace remat::detail {

inline constexpr std::uint32_t snapshot_schema = 1;
inline constexpr const char* snapshot_format_name = "remat snapshot file";
inline constexpr const char* snapshots_group_name = "snapshots";
inline constexpr const char* checksum_algorithm_name = "xxh64";

/// Objects of at least this many bytes start on a multiple of raw_alignment in the file, so that their
/// bytes can move with O_DIRECT.
inline constexpr std::uint64_t raw_alignment = 4096;
inline constexpr std::uint64_t raw_alignment_threshold = 64 * 1024;

/// Whether a slot's dataset holds a complete snapshot or one being (or left half) written.
enum class slot_state : std::uint8_t { writing, complete };

/// The attributes of one slot dataset.
struct snapshot_record {
    std::uint32_t schema = snapshot_schema;
    slot_t slot = -1;
    step_t step = -1;
    std::uint64_t bytes = 0;
    hdf5_element element = hdf5_element::uint8;
    std::uint64_t checksum = 0; ///< XXH64 of the snapshot's bytes
    slot_state state = slot_state::writing;

    /// XXH64 over a fixed little-endian encoding of every field above.
    [[nodiscard]] std::uint64_t record_checksum() const noexcept;
};

/// "slot_000003": six digits at least, so that h5dump lists slots in order.
std::string slot_dataset_name(slot_t slot);
/// The slot of a dataset name made by slot_dataset_name, or nothing.
std::optional<slot_t> parse_slot_dataset_name(std::string_view name);
/// "/snapshots/slot_000003".
std::string slot_dataset_path(slot_t slot);

/// The HDF5 file access properties remat uses: the 1.8 file format (checksummed metadata, and no
/// "file open for writing" flag that would keep a crashed writer's file from opening), large objects
/// aligned for O_DIRECT, and object metadata evicted from HDF5's cache when closed (each read re-reads
/// and re-checks what the file holds).
hdf5_plist snapshot_file_access();

/// An open snapshot file: the file and its /snapshots group.
struct snapshot_file {
    hdf5_file file;
    hdf5_group snapshots;
};

/// Creates a snapshot file at `path`, replacing what is there only once the new file is complete (it is
/// built under a temporary name and renamed). `expected_slots` sizes the group's index.
snapshot_file create_snapshot_file(const std::filesystem::path& path, std::uint64_t expected_slots);

/// Opens an existing snapshot file. Throws io_error (missing, unreadable, locked) or integrity_error
/// (not HDF5, not a remat snapshot file, unknown schema, truncated or damaged beyond opening).
snapshot_file open_snapshot_file(const std::filesystem::path& path, bool writable);

/// Whether `path` may be replaced by a new snapshot file: it does not exist, is empty, or is a remat
/// snapshot file. Otherwise the reason it may not.
std::optional<std::string> refuse_to_replace(const std::filesystem::path& path);

/// Creates a slot dataset holding `record` (normally in state writing) with the right shape and
/// storage. For contiguous storage the space is allocated at once (see dataset_offset).
hdf5_dataset create_slot_dataset(hid_t group, const snapshot_record& record, int compression,
                                 const std::string& context);

/// Rewrites the attributes of an existing slot dataset.
void write_record(hid_t dataset, const snapshot_record& record, const std::string& context);

/// A record read back, or why it cannot be trusted.
struct record_reading {
    snapshot_record record;
    std::string problem; ///< "" when the record is consistent
};

/// Reads and checks a slot dataset's attributes: every one present and of the right type, the record
/// checksum, the schema, and the dataset's shape and type against the record's bytes and element.
record_reading read_record(hid_t dataset);

/// Where a contiguous, unfiltered dataset's bytes start in the file; nothing for any other storage.
std::optional<std::uint64_t> dataset_offset(hid_t dataset);

/// The HDF5 file type and memory type of an element type.
hid_t element_file_type(hdf5_element e) noexcept;
hid_t element_memory_type(hdf5_element e) noexcept;
std::optional<hdf5_element> parse_element(std::string_view text) noexcept;

} // namespace remat::detail
