// `remat inspect` and `remat calibrate` as a user runs them (the real binary, stdout and stderr apart),
// and a store's file read by the HDF5 tools: h5dump dumps it, and the bytes h5dump extracts hash, with
// `xxhsum -H64`, to the checksum remat stored. h5dump (hdf5-tools) and xxhsum (xxhash) are declared
// dependencies: without them these tests fail.
#define BOOST_TEST_MODULE hdf5_cli
#include <boost/test/unit_test.hpp>

#include "hdf5_test_support.hpp"
#include "tool_runner.hpp"

#include "remat/hdf5/hdf5_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

using namespace remat;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::view;

namespace {

using result = remat::test::tool_result;

// (The scratch directory is for the snapshot files; outputs are captured by the shared runner.)
result run(const scratch_dir&, const std::string& command)
{
    return remat::test::run_command(command);
}

std::string tool(const std::string& args)
{
    return std::string(REMAT_TOOL) + " " + args;
}

std::size_t lines(const std::string& text)
{
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A file with x_12 (float64, 80000 bytes) in slot 0 and x_7 (bytes, 3000) in slot 2.
std::filesystem::path make_file(const scratch_dir& dir)
{
    const auto file = dir / "snapshots.h5";
    hdf5_store store(file, level_capacity{3}, {.element = hdf5_element::float64});
    std::vector<double> x(10000);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 0.5 * static_cast<double>(i);
    store.write(0, 12, host_bytes(std::as_bytes(std::span(x))));
    store.write(2, 7, view(pattern_bytes(7, 3000)));
    return file;
}

} // namespace

BOOST_AUTO_TEST_CASE(inspect_lists_the_snapshots)
{
    scratch_dir dir;
    const auto file = make_file(dir);
    const result r = run(dir, tool("inspect " + file.string()));
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(r.err.empty());
    BOOST_TEST(r.out.find("2 snapshots") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("/snapshots/slot_000000/state") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("float64") != std::string::npos, r.out);

    const result j = run(dir, tool("inspect --verify --format json " + file.string()));
    BOOST_TEST_REQUIRE(j.status == 0, j.err);
    const auto doc = nlohmann::json::parse(j.out);
    BOOST_TEST(doc["ok"] == true);
    BOOST_TEST_REQUIRE(doc["snapshots"].size() == 2u);
    BOOST_TEST(doc["snapshots"][0]["step"] == 12);
    BOOST_TEST(doc["snapshots"][0]["bytes"] == 80000);
    BOOST_TEST(doc["snapshots"][0]["verified"] == true);
    BOOST_TEST(doc["snapshots"][1]["slot"] == 2);
    BOOST_TEST(doc["snapshots"][1]["element_type"] == "float64");
}

BOOST_AUTO_TEST_CASE(inspect_aligns_the_columns_for_any_step)
{
    // Steps go to 2^63-1: the step column was 12 wide, and x_9223372036854775807 pushed the rest of its line right.
    scratch_dir dir;
    const auto file = dir / "wide.h5";
    {
        hdf5_store store(file, level_capacity{});
        store.write(5, 9223372036854775807, view(pattern_bytes(1, 16)));
        store.write(2, 7, view(pattern_bytes(2, 4096)));
    }
    const result r = run(dir, tool("inspect " + file.string()));
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    std::vector<std::string> rows;
    for (std::size_t at = 0, end = 0; (end = r.out.find('\n', at)) != std::string::npos; at = end + 1)
        rows.push_back(r.out.substr(at, end - at));
    BOOST_TEST_REQUIRE(rows.size() == 4u, r.out); // the file's line, the header, two snapshots
    const std::size_t bytes_end = rows[1].find("bytes") + 5;
    const std::size_t element_end = rows[1].find("element") + 7;
    for (std::size_t i = 2; i < rows.size(); ++i) {
        BOOST_TEST(rows[i].find(i == 2 ? "4096 " : "16 ") + (i == 2 ? 4 : 2) == bytes_end, r.out);
        BOOST_TEST(rows[i].find("uint8") + 5 == element_end, r.out);
    }
}

BOOST_AUTO_TEST_CASE(inspect_prints_the_part_sizes_of_multi_part_snapshots)
{
    // x_4 of three parts (1024, 8 and 16 bytes) in slot 1, x_9 of one part in slot 0: the text gives
    // 1024+8+16 and "-", the JSON part_bytes [1024, 8, 16] and [], as the file's part_bytes attributes say.
    scratch_dir dir;
    const auto file = dir / "parts.h5";
    const std::vector<std::byte> h = pattern_bytes(1, 1024), step = pattern_bytes(2, 8), scalars = pattern_bytes(3, 16);
    {
        hdf5_store store(file, level_capacity{2});
        const std::array<const_bytes, 3> parts{view(h), view(step), view(scalars)};
        store.write(1, 4, const_parts(parts));
        store.write(0, 9, view(pattern_bytes(4, 100)));
    }
    const result r = run(dir, tool("inspect --verify " + file.string()));
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(r.out.find("parts") != std::string::npos, r.out);
    std::istringstream rows(r.out);
    std::string row, slot0, slot1;
    while (std::getline(rows, row)) {
        if (row.find("slot_000000") != std::string::npos)
            slot0 = row;
        if (row.find("slot_000001") != std::string::npos)
            slot1 = row;
    }
    BOOST_TEST(slot1.find(" 1048  1024+8+16 ") != std::string::npos, slot1);
    BOOST_TEST(slot0.find(" 100  - ") != std::string::npos, slot0);

    const result j = run(dir, tool("inspect --format json " + file.string()));
    BOOST_TEST_REQUIRE(j.status == 0, j.err);
    const auto doc = nlohmann::json::parse(j.out);
    BOOST_TEST_REQUIRE(doc["snapshots"].size() == 2u);
    BOOST_TEST(doc["snapshots"][0]["part_bytes"] == nlohmann::json::array());
    BOOST_TEST(doc["snapshots"][1]["part_bytes"] == nlohmann::json::array({1024, 8, 16}));
    BOOST_TEST(doc["snapshots"][1]["bytes"] == 1048);
}

BOOST_AUTO_TEST_CASE(verify_exits_1_naming_the_damaged_snapshot)
{
    scratch_dir dir;
    const auto file = make_file(dir);
    remat::test::flip_byte(file, remat::test::hdf5_data_offset(file, "/snapshots/slot_000000/state") + 1000);
    BOOST_TEST(run(dir, tool("inspect " + file.string())).status == 0); // the metadata is intact
    const result r = run(dir, tool("inspect --verify " + file.string()));
    BOOST_TEST(r.status == 1);
    BOOST_TEST(lines(r.err) == 1u, r.err);
    BOOST_TEST(r.err.find("/snapshots/slot_000000/state") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("checksum mismatch") != std::string::npos, r.err);
    BOOST_TEST(r.out.find("damaged") != std::string::npos, r.out); // the listing still comes out
}

BOOST_AUTO_TEST_CASE(inspect_errors_and_usage)
{
    scratch_dir dir;
    const auto file = make_file(dir);
    for (const std::string& args : {"inspect " + (dir / "missing.h5").string(),
                                    "inspect " + (dir / "stdout.txt").string(), std::string("inspect /")}) {
        std::ofstream(dir / "stdout.txt") << "not hdf5\n";
        const result r = run(dir, tool(args));
        BOOST_TEST(r.status == 1, args << ": " << r.err);
        BOOST_TEST(lines(r.err) == 1u, args << ": " << r.err);
        BOOST_TEST(r.err.rfind("remat: ", 0) == 0u, r.err);
    }
    for (const std::string& args : {std::string("inspect"), "inspect --format xml " + file.string()}) {
        const result r = run(dir, tool(args));
        BOOST_TEST(r.status == 2, args << ": " << r.err);
        BOOST_TEST(lines(r.err) == 1u, args << ": " << r.err);
    }
}

BOOST_AUTO_TEST_CASE(calibrate_reports_costs_against_the_raw_disk)
{
    scratch_dir dir;
    const result j = run(dir, tool("calibrate --disk " + dir.path().string() +
                                   " --snapshot-bytes 2MiB --repeats 3 --step-seconds 0.001 --format json"));
    BOOST_TEST_REQUIRE(j.status == 0, j.err);
    const auto doc = nlohmann::json::parse(j.out);
    for (const char* key : {"write_bytes_per_s", "read_bytes_per_s", "raw_write_bytes_per_s", "raw_read_bytes_per_s",
                            "host_copy_bytes_per_s"})
        BOOST_TEST(doc.at(key).get<double>() > 0, key);
    BOOST_TEST(doc.at("snapshot_bytes") == 2u << 20);
    // Seconds times bytes per second is the snapshot, and steps are seconds over the step's seconds.
    BOOST_TEST(doc.at("write_seconds").get<double>() * doc.at("write_bytes_per_s").get<double>() ==
                   static_cast<double>(2u << 20),
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(doc.at("disk_write_steps").get<double>() == doc.at("write_seconds").get<double>() / 0.001,
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(doc.at("disk_level").get<std::string>().rfind("disk:inf:", 0) == 0u);
    // The scratch files are gone.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        BOOST_TEST(entry.path().filename().string().find("remat-calibrate") == std::string::npos, entry.path());

    const result t = run(dir, tool("calibrate --disk " + dir.path().string() + " --snapshot-bytes 1MiB --repeats 1"));
    BOOST_TEST(t.status == 0, t.err);
    BOOST_TEST(t.out.find("--step-seconds") != std::string::npos, t.out);

    for (const std::string& args :
         {std::string("calibrate"), "calibrate --disk " + dir.path().string() + " --snapshot-bytes 0",
          "calibrate --disk " + dir.path().string() + " --repeats 0",
          "calibrate --disk " + dir.path().string() + " --step-seconds -1"})
        BOOST_TEST(run(dir, tool(args)).status == 2, args);
    // More than the machine's memory: one line naming the value as given, not "std::bad_alloc".
    const result huge = run(dir, tool("calibrate --disk " + dir.path().string() + " --snapshot-bytes 100TiB"));
    BOOST_TEST(huge.status == 2);
    BOOST_TEST(lines(huge.err) == 1u, huge.err);
    BOOST_TEST(huge.err.find("--snapshot-bytes 100TiB") != std::string::npos, huge.err);
    BOOST_TEST(huge.err.find("bad_alloc") == std::string::npos, huge.err);
    const result missing = run(dir, tool("calibrate --disk " + (dir / "nowhere").string()));
    BOOST_TEST(missing.status == 1);
    BOOST_TEST(lines(missing.err) == 1u, missing.err);
    // A path that does not exist was "not a directory"; a file is one.
    BOOST_TEST(missing.err.find("nowhere: no such directory") != std::string::npos, missing.err);
    const auto file = make_file(dir);
    const result not_directory = run(dir, tool("calibrate --disk " + file.string()));
    BOOST_TEST(not_directory.status == 1);
    BOOST_TEST(not_directory.err.find("snapshots.h5: not a directory") != std::string::npos, not_directory.err);
}

BOOST_AUTO_TEST_CASE(h5dump_reads_the_file_and_xxhsum_agrees_with_the_checksums)
{
    scratch_dir dir;
    const auto file = make_file(dir);
    const result dump = run(dir, std::string(REMAT_H5DUMP) + " " + file.string());
    BOOST_TEST_REQUIRE(dump.status == 0, "h5dump (hdf5-tools) failed or is missing: " << dump.err);
    for (const char* expected :
         {"remat_format", "remat snapshot file", "slot_000000", "H5T_IEEE_F64LE", "record_checksum", "\"complete\""})
        BOOST_TEST(dump.out.find(expected) != std::string::npos, expected);
    // The data as h5dump extracts it, hashed by the reference tool, is the stored checksum.
    const hdf5_file_contents c = hdf5_inspect(file);
    for (const hdf5_snapshot_info& s : c.snapshots) {
        const auto bytes = dir / "extracted.bin";
        const result extract = run(dir, std::string(REMAT_H5DUMP) + " -d " + s.dataset + " -b LE -o " + bytes.string() +
                                            " " + file.string());
        BOOST_TEST_REQUIRE(extract.status == 0, extract.err);
        BOOST_TEST(std::filesystem::file_size(bytes) == s.bytes);
        const result sum = run(dir, std::string(REMAT_XXHSUM) + " -H64 " + bytes.string()); // (progress on stderr)
        BOOST_TEST_REQUIRE(sum.status == 0, "xxhsum (xxhash) failed or is missing: " << sum.err);
        BOOST_TEST(std::stoull(sum.out.substr(0, 16), nullptr, 16) == s.checksum, s.dataset);
    }
}

// One line on stderr, always (issue 37). Damaged object headers made HDF5 1.10 print "infinite loop closing
// library" and a line of interface names at exit, after remat's own message: HDF5 keeps the internals of a
// file whose header it failed to load, with no identifier left to close (every one of remat's is closed,
// H5Fget_obj_count says 0), and prints about them at exit while its error printing is on. Headers of slot
// groups and datasets are damaged here on purpose, and bytes all over the file's metadata.
BOOST_AUTO_TEST_CASE(damaged_files_give_one_line_on_stderr)
{
    scratch_dir dir;
    const auto intact = make_file(dir);
    const std::vector<char> bytes = remat::test::read_file(intact);
    std::vector<std::uint64_t> offsets;
    for (const char* object : {"/snapshots/slot_000001", "/snapshots/slot_000000/state", "/snapshots/slot_000002"})
        offsets.push_back(remat::test::hdf5_header_address(intact, object) + 8);
    std::uint64_t x = 0x9E3779B97F4A7C15ULL; // and 16 places in the first 16 KiB (where the metadata is)
    for (int i = 0; i < 16; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        offsets.push_back(x % std::min<std::uint64_t>(16384, bytes.size() - 4));
    }
    int damaged = 0;
    for (const std::uint64_t at : offsets) {
        const auto file = dir / "damaged.h5";
        std::filesystem::copy_file(intact, file, std::filesystem::copy_options::overwrite_existing);
        for (std::uint64_t k = 0; k < 4; ++k)
            remat::test::flip_byte(file, at + k);
        const result r = run(dir, tool("inspect --verify " + file.string()));
        BOOST_TEST((r.status == 0 || r.status == 1), "offset " << at << ": " << r.status);
        BOOST_TEST(lines(r.err) == (r.status == 0 ? 0u : 1u), "offset " << at << ": " << r.err);
        damaged += r.status == 1 ? 1 : 0;
    }
    BOOST_TEST(damaged >= 5); // the damage was seen
}

// A disk that fills while `remat calibrate` makes its file (a file size limit of 1 to 4 KiB, SIGXFSZ
// ignored): exit 1, one line, nothing left in the directory. Before, HDF5's lines followed remat's, or the
// process crashed at exit (SIGSEGV), and a *.remat-new-PID file stayed.
BOOST_AUTO_TEST_CASE(calibrate_on_a_full_disk_gives_one_line_and_leaves_nothing)
{
    scratch_dir dir;
    for (const int kib : {1, 2, 4}) {
        const auto disk = dir / ("disk" + std::to_string(kib));
        std::filesystem::create_directory(disk);
        const result r =
            run(dir, "( ulimit -f " + std::to_string(kib) + "; trap '' XFSZ; " +
                         tool("calibrate --disk " + disk.string() + " --snapshot-bytes 1MiB --repeats 1") + " )");
        BOOST_TEST(r.status == 1, kib << " KiB: " << r.status << " " << r.err);
        BOOST_TEST(lines(r.err) == 1u, kib << " KiB: " << r.err);
        BOOST_TEST(r.err.find("File too large") != std::string::npos, r.err);
        BOOST_TEST(std::filesystem::is_empty(disk), disk);
    }
}

// Output that cannot be written: exit 1 and one line (before: exit 1 and nothing).
BOOST_AUTO_TEST_CASE(inspect_into_a_full_stdout_gives_one_line)
{
    scratch_dir dir;
    const auto file = make_file(dir);
    const result r = run(dir, "{ " + tool("inspect " + file.string()) + " >/dev/full; }");
    BOOST_TEST(r.status == 1);
    BOOST_TEST(lines(r.err) == 1u, r.err);
    BOOST_TEST(r.err.find("standard output") != std::string::npos, r.err);
}
