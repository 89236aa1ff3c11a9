// The layout of a remat snapshot file (schema 1), shared by the store and by inspection.
//
//   /                             attributes remat_format = "remat snapshot file", remat_schema = 1,
//                                 checksum_algorithm = "xxh64"
//   /write_intent                 uint8[1024], contiguous: the slots a writer may be changing (write_intent.hpp);
//                                 absent in files of remat before it, which then name no slot
//   /snapshots/slot_NNNNNN        one group per slot, made in advance when the file is created
//   /snapshots/slot_NNNNNN/state  the slot's snapshot: rank 1, element type as chosen, contiguous (or
//                                 chunked + shuffle + deflate when compressed); attributes schema, slot,
//                                 step, bytes, element_type, checksum, state, record_checksum; and
//                                 part_bytes (uint64[n]) when the snapshot is n >= 2 parts laid one after
//                                 the other (a multi-part state), absent for one part
//
// Why a group per slot, made in advance: writing a snapshot then changes only metadata of that slot (its
// group's link, its dataset's header) and the superblock, never the index of /snapshots or another slot's
// metadata. A write cut short at any point, even half way through a metadata block, can damage only the
// slot being written, whose previous snapshot had already been released.
//
// `record_checksum` is the XXH64 of the other attributes, so a record whose attributes were only partly
// rewritten (a process killed between two metadata writes) is never taken for a valid one.
#pragma once

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5_internal/hdf5_handle.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace remat::detail {

/// "0x00000000deadbeef": checksums in messages.
std::string hex(std::uint64_t v);

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
    /// The sizes of its parts when there are two or more (they add up to `bytes`); empty for one part.
    std::vector<std::uint64_t> parts;

    /// XXH64 over a fixed little-endian encoding of every field above (`parts` only when not empty, so
    /// that a one-part record hashes as it always has).
    [[nodiscard]] std::uint64_t record_checksum() const noexcept;
};

/// Slot groups made when a file is created (all of a smaller capacity): few, because each costs about
/// 20 us and an unlimited store would otherwise pay for thousands it may never use. More are made on
/// demand, in batches that double from this size up to slot_groups_batch_max.
inline constexpr std::uint64_t slot_groups_in_advance = 64;
inline constexpr std::uint64_t slot_groups_batch_max = 4096;

/// The name of a slot's group: "slot_000003" (six digits at least, so that h5dump lists slots in order),
/// or "slot_000003.2" for a later generation. A later generation of a group, or of a dataset, is made only
/// when the earlier one was damaged beyond use (a write torn by a crash or a power cut): HDF5 can neither
/// delete nor rename a link to an object whose header it cannot read, so the name stays taken.
std::string slot_group_name(slot_t slot, unsigned generation = 0);
/// "state", or "state.2" for a later generation of a slot's dataset.
std::string state_dataset_name(unsigned generation = 0);

struct slot_generation {
    slot_t slot = -1;
    unsigned generation = 0;
};
std::optional<slot_generation> parse_slot_group_name(std::string_view name);
std::optional<unsigned> parse_state_dataset_name(std::string_view name);

/// Where a slot's snapshot lives in a file, and what else of the slot the file holds.
struct slot_place {
    std::string group;         ///< the readable group of the highest generation, "" when there is none
    std::string dataset;       ///< in it, the dataset of the highest generation that opens, or ""
    unsigned next_group = 0;   ///< a generation above every group of this slot
    unsigned next_dataset = 0; ///< a generation above every dataset name in `group`
    /// Objects that are not the current ones: (path below /snapshots, why they are set aside).
    std::vector<std::pair<std::string, std::string>> leftovers;
};

/// The structure under /snapshots: the slots, and any names that are not slot groups.
struct snapshot_layout {
    std::map<slot_t, slot_place> slots;
    std::vector<std::string> unexpected;
};

/// Reads the structure under /snapshots (names, and which groups and datasets open). Throws
/// integrity_error when /snapshots cannot be listed.
snapshot_layout locate_snapshots(hid_t snapshots, const std::string& where);

/// Makes the group `name` under /snapshots, sized for a slot's dataset.
void create_slot_group(hid_t snapshots, const std::string& name, const std::string& where);

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

/// Creates a snapshot file at `path` with the groups of slots 0 .. slot_groups-1, replacing what is there
/// only once the new file is complete (it is built under a temporary name and renamed), and only when it
/// may be replaced (refuse_to_replace). Atomic against another process creating the same file: one of
/// them wins, the other gets io_error (creation_guard.hpp). A non-empty `run_identity` (at most
/// run_identity_bytes) is recorded on / as the attribute `run_identity`.
snapshot_file create_snapshot_file(const std::filesystem::path& path, std::uint64_t slot_groups,
                                   std::string_view run_identity = {});

/// The longest run identity a file records.
inline constexpr std::size_t run_identity_bytes = 255;

/// The `run_identity` attribute of an open snapshot file; "" when it has none.
std::string read_run_identity(hid_t file);

/// Opens an existing snapshot file. Throws io_error (missing, unreadable, locked) or integrity_error
/// (not HDF5, not a remat snapshot file, unknown schema, truncated or damaged beyond opening).
snapshot_file open_snapshot_file(const std::filesystem::path& path, bool writable);

/// Whether `path` may be replaced by a new snapshot file: it does not exist, is empty, or is a remat
/// snapshot file. Otherwise the reason it may not.
std::optional<std::string> refuse_to_replace(const std::filesystem::path& path);

/// Creates the dataset `relative` ("slot_000003/state", below /snapshots, in an existing group) holding
/// `record` (normally in state writing) with the right shape and storage. Contiguous storage is allocated
/// at once (see dataset_offset).
hdf5_dataset create_slot_dataset(hid_t snapshots, const std::string& relative, const snapshot_record& record,
                                 int compression, const std::string& context);

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

/// Ends the file with one byte that no object owns, unless the end of file (EOA) is still `guarded_end`
/// (where the last guard left it), and returns the EOA after it (also stored in guarded_end). Why: HDF5 1.10 gives the
/// space of a deleted object at the end of the file back by truncating the file, before it rewrites the superblock with
/// the smaller size; a crash in between leaves a superblock that names an end beyond the file's, and HDF5 then refuses
/// to open it. With an unowned last byte, nothing freed is ever at the end, freed space goes to HDF5's free list (and
/// is reused), and the end of the file never moves below what the superblock on disk says.
std::uint64_t guard_end_of_file(hid_t file, std::uint64_t& guarded_end, const std::string& where);

/// Where a contiguous, unfiltered dataset's bytes start in the file; nothing for any other storage.
std::optional<std::uint64_t> dataset_offset(hid_t dataset);

/// The HDF5 file type and memory type of an element type.
hid_t element_file_type(hdf5_element e) noexcept;
hid_t element_memory_type(hdf5_element e) noexcept;
std::optional<hdf5_element> parse_element(std::string_view text) noexcept;

} // namespace remat::detail
