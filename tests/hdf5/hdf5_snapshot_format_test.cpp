// The HDF5 level's file format (levels/hdf5/src/snapshot_format.cpp) on its own: slot and dataset names
// round-trip and sort as the slots do, every field of a record is covered by its checksum, a record
// written is read back as written and one whose attribute was changed behind its back (through the HDF5
// C API directly) is refused, a new file lists its slot groups, large contiguous datasets start aligned
// for O_DIRECT, and files that are not remat snapshot files are refused as they should be.
#define BOOST_TEST_MODULE hdf5_snapshot_format
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"
#include "snapshot_format.hpp"

#include "remat/error.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct quiet_hdf5 { // the refused files below would make HDF5 print its error stack
    quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
};
BOOST_TEST_GLOBAL_FIXTURE(quiet_hdf5);

remat::detail::snapshot_record sample_record()
{
    remat::detail::snapshot_record r;
    r.slot = 3;
    r.step = 1234567;
    r.bytes = 96;
    r.element = remat::hdf5_element::float64;
    r.checksum = 0x0123456789abcdefULL;
    r.state = remat::detail::slot_state::complete;
    return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(slot_and_dataset_names_round_trip_and_sort_as_the_slots)
{
    std::vector<std::string> names;
    for (const remat::slot_t slot : {0, 3, 9, 10, 99, 123456, 999999, 1000000, 12345678}) {
        for (const unsigned generation : {0u, 2u, 17u}) {
            const std::string name = remat::detail::slot_group_name(slot, generation);
            const auto parsed = remat::detail::parse_slot_group_name(name);
            BOOST_TEST_REQUIRE(parsed.has_value(), name);
            BOOST_TEST(parsed->slot == slot);
            BOOST_TEST(parsed->generation == generation);
        }
        if (slot < 1000000)
            names.push_back(remat::detail::slot_group_name(slot));
    }
    BOOST_TEST(remat::detail::slot_group_name(3) == "slot_000003");
    BOOST_TEST(std::is_sorted(names.begin(), names.end())); // h5dump lists them in slot order
    for (const unsigned generation : {0u, 2u, 40u}) {
        const auto parsed = remat::detail::parse_state_dataset_name(remat::detail::state_dataset_name(generation));
        BOOST_TEST_REQUIRE(parsed.has_value());
        BOOST_TEST(*parsed == generation);
    }
    for (const char* other :
         {"slot_", "slot_3", "slot_12x", "slots_000001", "state", "", "slot_000001.", "slot_000001.0", "slot_-00001"})
        BOOST_TEST(!remat::detail::parse_slot_group_name(other).has_value(), other);
    for (const char* other : {"states", "state.", "state.x", "stat", "slot_000001"})
        BOOST_TEST(!remat::detail::parse_state_dataset_name(other).has_value(), other);
}

BOOST_AUTO_TEST_CASE(every_field_of_a_record_is_covered_by_its_checksum)
{
    const auto base = sample_record();
    const std::uint64_t sum = base.record_checksum();
    std::vector<remat::detail::snapshot_record> changed(8, base);
    changed[0].schema += 1;
    changed[1].slot += 1;
    changed[2].step += 1;
    changed[3].bytes += 8;
    changed[4].element = remat::hdf5_element::int64;
    changed[5].checksum ^= 1;
    changed[6].state = remat::detail::slot_state::writing;
    changed[7].parts = {32, 64};
    for (std::size_t i = 0; i < changed.size(); ++i)
        BOOST_TEST(changed[i].record_checksum() != sum, "field " << i);
    auto other_split = changed[7];
    other_split.parts = {64, 32};
    BOOST_TEST(other_split.record_checksum() != changed[7].record_checksum());
}

BOOST_AUTO_TEST_CASE(a_new_file_lists_its_slots_and_a_record_reads_back_as_written)
{
    remat::test::scratch_dir dir;
    const auto path = dir / "run.h5";
    {
        auto f = remat::detail::create_snapshot_file(path, 5, "run-42");
        BOOST_TEST(remat::detail::read_run_identity(f.file.get()) == "run-42");
        const auto layout = remat::detail::locate_snapshots(f.snapshots.get(), path.string());
        BOOST_TEST(layout.slots.size() == 5u);
        BOOST_TEST(layout.unexpected.empty());
        for (const auto& [slot, place] : layout.slots) {
            BOOST_TEST(place.group == remat::detail::slot_group_name(slot));
            BOOST_TEST(place.dataset.empty()); // no snapshot yet
        }
        auto record = sample_record();
        record.bytes = 1 << 20; // large: placed for O_DIRECT
        record.element = remat::hdf5_element::uint8;
        const auto ds = remat::detail::create_slot_dataset(
            f.snapshots.get(), remat::detail::slot_group_name(3) + "/" + remat::detail::state_dataset_name(), record, 0,
            "test");
        const auto offset = remat::detail::dataset_offset(ds.get());
        BOOST_TEST_REQUIRE(offset.has_value());
        BOOST_TEST(*offset % remat::detail::raw_alignment == 0u);
        const auto back = remat::detail::read_record(ds.get());
        BOOST_TEST(back.problem.empty(), back.problem);
        BOOST_TEST(back.record.step == record.step);
        BOOST_TEST(back.record.slot == record.slot);
        BOOST_TEST(back.record.bytes == record.bytes);
        BOOST_TEST(back.record.checksum == record.checksum);
        BOOST_TEST(back.record.record_checksum() == record.record_checksum());
        // The step changed behind the record's back, as a write cut between two attributes would leave it.
        const hid_t step = H5Aopen(ds.get(), "step", H5P_DEFAULT);
        BOOST_TEST_REQUIRE(step >= 0);
        const std::int64_t other = record.step + 1;
        BOOST_TEST_REQUIRE(H5Awrite(step, H5T_NATIVE_INT64, &other) >= 0);
        H5Aclose(step);
        BOOST_TEST(!remat::detail::read_record(ds.get()).problem.empty());
    }
    auto reopened = remat::detail::open_snapshot_file(path, false);
    BOOST_TEST(remat::detail::locate_snapshots(reopened.snapshots.get(), path.string()).slots.at(3).dataset ==
               remat::detail::state_dataset_name());
}

BOOST_AUTO_TEST_CASE(files_that_are_not_snapshot_files_are_refused)
{
    remat::test::scratch_dir dir;
    BOOST_TEST(!remat::detail::refuse_to_replace(dir / "absent.h5").has_value());
    std::ofstream(dir / "empty.h5").close();
    BOOST_TEST(!remat::detail::refuse_to_replace(dir / "empty.h5").has_value());
    std::ofstream(dir / "notes.txt") << "someone's notes\n";
    BOOST_TEST(remat::detail::refuse_to_replace(dir / "notes.txt").has_value());
    BOOST_CHECK_THROW(remat::detail::open_snapshot_file(dir / "notes.txt", false), remat::integrity_error);
    BOOST_CHECK_THROW(remat::detail::open_snapshot_file(dir / "absent.h5", false), remat::io_error);
    // An HDF5 file of someone else's is HDF5, but not a remat snapshot file.
    const hid_t foreign = H5Fcreate((dir / "foreign.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    BOOST_TEST_REQUIRE(foreign >= 0);
    H5Fclose(foreign);
    BOOST_TEST(remat::detail::refuse_to_replace(dir / "foreign.h5").has_value());
    BOOST_CHECK_THROW(remat::detail::open_snapshot_file(dir / "foreign.h5", false), remat::integrity_error);
    remat::detail::create_snapshot_file(dir / "ours.h5", 2);
    BOOST_TEST(!remat::detail::refuse_to_replace(dir / "ours.h5").has_value());
}
