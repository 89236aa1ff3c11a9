// remat_report's safe file writing: regular files replaced all or nothing, symlinks kept and their
// targets replaced, devices and FIFOs written through (never replaced), bad paths named.
#define BOOST_TEST_MODULE report_output_file
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"

#include "remat/error.hpp"
#include "remat/report/output_file.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <thread>

using namespace remat;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p)
{
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& p, const std::string& text)
{
    report::write_file_safely(p, [&](std::ostream& out) { out << text; });
}

std::size_t entries(const fs::path& dir)
{
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

} // namespace

BOOST_AUTO_TEST_CASE(new_and_existing_regular_files)
{
    const test::scratch_dir dir;
    const auto file = dir / "out.svg";
    write_text(file, "first");
    BOOST_TEST(slurp(file) == "first");
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    write_text(file, "second");
    BOOST_TEST(slurp(file) == "second");
    BOOST_TEST(
        (fs::status(file).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read)));
    BOOST_TEST(entries(dir.path()) == 1u); // no temporary left beside it
}

BOOST_AUTO_TEST_CASE(a_failing_writer_leaves_the_old_file_and_no_temporary)
{
    const test::scratch_dir dir;
    const auto file = dir / "out.svg";
    write_text(file, "old");
    BOOST_CHECK_THROW(report::write_file_safely(file,
                                                [](std::ostream& out) {
                                                    out << "half";
                                                    throw std::runtime_error("interrupted");
                                                }),
                      std::runtime_error);
    BOOST_TEST(slurp(file) == "old");
    BOOST_TEST(entries(dir.path()) == 1u);
}

BOOST_AUTO_TEST_CASE(a_symlink_stays_and_its_target_is_replaced)
{
    const test::scratch_dir dir;
    fs::create_directory(dir / "real");
    const auto target = dir / "real" / "chart.svg";
    write_text(target, "old");
    const auto link = dir / "link.svg";
    fs::create_symlink(target, link);
    write_text(link, "new");
    BOOST_TEST(fs::is_symlink(link));
    BOOST_TEST(fs::read_symlink(link) == target);
    BOOST_TEST(slurp(target) == "new");
    BOOST_TEST(entries(dir / "real") == 1u);

    // A dangling link is written through: it names the file to create.
    const auto dangling = dir / "dangling.svg";
    fs::create_symlink(dir / "real" / "created.svg", dangling);
    write_text(dangling, "made");
    BOOST_TEST(fs::is_symlink(dangling));
    BOOST_TEST(slurp(dir / "real" / "created.svg") == "made");
}

BOOST_AUTO_TEST_CASE(a_fifo_is_written_through_not_replaced)
{
    const test::scratch_dir dir;
    const auto fifo = dir / "pipe";
    BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string received;
    std::thread reader([&] { received = slurp(fifo); });
    write_text(fifo, "through the pipe");
    reader.join();
    BOOST_TEST(received == "through the pipe");
    BOOST_TEST(fs::is_fifo(fifo));
    BOOST_TEST(entries(dir.path()) == 1u);
}

BOOST_AUTO_TEST_CASE(a_character_device_is_written_through_not_replaced)
{
    // /dev/null: as root, renaming a regular file over it would replace the device node.
    struct stat before{};
    BOOST_TEST_REQUIRE(::stat("/dev/null", &before) == 0);
    BOOST_TEST_REQUIRE(S_ISCHR(before.st_mode));
    write_text("/dev/null", "discarded");
    struct stat after{};
    BOOST_TEST_REQUIRE(::stat("/dev/null", &after) == 0);
    BOOST_TEST(S_ISCHR(after.st_mode));
    BOOST_TEST(after.st_rdev == before.st_rdev);
    BOOST_TEST(after.st_ino == before.st_ino);
}

BOOST_AUTO_TEST_CASE(bad_paths_are_named)
{
    const test::scratch_dir dir;
    try {
        write_text("", "x");
        BOOST_FAIL("an empty path was accepted");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("\"\"") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("empty") != std::string::npos, e.what());
    }
    try {
        write_text(dir.path(), "x");
        BOOST_FAIL("a directory was accepted");
    } catch (const io_error& e) {
        BOOST_TEST(std::string(e.what()).find(dir.path().string()) != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("directory") != std::string::npos, e.what());
    }
    const auto missing = dir / "no-such-dir" / "x.svg";
    try {
        write_text(missing, "x");
        BOOST_FAIL("a path in a missing directory was accepted");
    } catch (const io_error& e) {
        BOOST_TEST(std::string(e.what()).find(missing.string()) != std::string::npos, e.what());
    }
    BOOST_TEST(!fs::exists(dir / "no-such-dir"));
}
