// Permissions are not damage (issue 37): an intact snapshot file that may not be written or read is an
// io_error naming the permission problem, never an integrity_error calling the file "truncated or damaged".
//
// Root ignores permission bits, and tests often run as root: each case runs in a forked child that, when
// the test runs as root, first becomes nobody (setgid/setuid 65534), and checks that it is really denied
// (access() fails) before it tries, so the case exercises the refusal it names wherever it runs.
#define BOOST_TEST_MODULE hdf5_permission
#include <boost/test/unit_test.hpp>

#include "forked_child.hpp"
#include "hdf5_test_support.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"

#include <functional>
#include <string>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace remat;
using remat::test::forked_child;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::view;

namespace {

constexpr uid_t nobody = 65534;

// A scratch directory with an intact snapshot file in `dir/sub/run.h5`, all reachable by nobody.
struct intact_file {
    scratch_dir root;
    std::filesystem::path dir = root / "sub";
    std::filesystem::path file = dir / "run.h5";
    intact_file()
    {
        std::filesystem::create_directory(dir);
        {
            hdf5_store store(file, level_capacity{2});
            store.write(0, 5, view(pattern_bytes(5, 1000)));
        }
        // mkdtemp made root 0700; others must reach what lies below it.
        std::filesystem::permissions(root.path(), std::filesystem::perms(0755));
    }
    ~intact_file()
    {
        std::error_code ec; // let the scratch directory be removed
        std::filesystem::permissions(dir, std::filesystem::perms(0755), ec);
        std::filesystem::permissions(file, std::filesystem::perms(0644), ec);
    }
    intact_file(const intact_file&) = delete;
    intact_file& operator=(const intact_file&) = delete;
};

// Runs `attempt` in a child with no privileges, after checking that `denied` (an access() check) is really
// denied there. "io_error: ...", "integrity_error: ...", "another error: ...", "no error", or why the case
// could not be set up.
std::string as_unprivileged(const std::function<bool()>& denied, const std::function<void()>& attempt)
{
    forked_child child([&]() -> std::string {
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(nobody) != 0 || ::setuid(nobody) != 0))
            return "setup: cannot become nobody";
        if (!denied())
            return "setup: the permission is not denied here (is $TMPDIR reachable by nobody?)";
        try {
            attempt();
            return "no error";
        } catch (const io_error& e) {
            return std::string("io_error: ") + e.what();
        } catch (const integrity_error& e) {
            return std::string("integrity_error: ") + e.what();
        } catch (const std::exception& e) {
            return std::string("another error: ") + e.what();
        }
    });
    return child.wait();
}

bool cannot(const std::filesystem::path& path, int mode)
{
    return ::access(path.c_str(), mode) != 0;
}

void check_permission_error(const std::string& said, const std::filesystem::path& file)
{
    BOOST_TEST_MESSAGE(said);
    BOOST_TEST(said.rfind("io_error: ", 0) == 0, said);
    BOOST_TEST(said.find("Permission denied") != std::string::npos, said);
    BOOST_TEST(said.find(file.string()) != std::string::npos, said);
    BOOST_TEST(said.find("damaged") == std::string::npos, said);
}

} // namespace

BOOST_AUTO_TEST_CASE(resuming_in_a_read_only_directory_is_a_permission_error)
{
    intact_file f;
    std::filesystem::permissions(f.file, std::filesystem::perms(0444));
    std::filesystem::permissions(f.dir, std::filesystem::perms(0555));
    const std::string said =
        as_unprivileged([&] { return cannot(f.file, W_OK) && !cannot(f.file, R_OK); },
                        [&] { hdf5_store store(f.file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume}); });
    check_permission_error(said, f.file);
}

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_a_permission_error_to_resume_and_to_inspect)
{
    intact_file f;
    std::filesystem::permissions(f.file, std::filesystem::perms(0000));
    check_permission_error(
        as_unprivileged([&] { return cannot(f.file, R_OK); },
                        [&] { hdf5_store store(f.file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume}); }),
        f.file);
    check_permission_error(
        as_unprivileged([&] { return cannot(f.file, R_OK); }, [&] { (void)hdf5_inspect(f.file, true); }), f.file);
}

BOOST_AUTO_TEST_CASE(creating_in_a_read_only_directory_is_a_permission_error)
{
    intact_file f;
    std::filesystem::permissions(f.dir, std::filesystem::perms(0555));
    const auto fresh = f.dir / "new.h5";
    const std::string said =
        as_unprivileged([&] { return cannot(f.dir, W_OK); }, [&] { hdf5_store store(fresh, level_capacity{2}); });
    check_permission_error(said, fresh);
    BOOST_TEST(!std::filesystem::exists(fresh));
}

// The intact file was never touched: it still resumes, with its snapshot, for whoever may write it.
BOOST_AUTO_TEST_CASE(the_refused_file_is_intact)
{
    intact_file f;
    std::filesystem::permissions(f.file, std::filesystem::perms(0444));
    (void)as_unprivileged(
        [&] { return cannot(f.file, W_OK); },
        [&] { hdf5_store store(f.file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume}); });
    std::filesystem::permissions(f.file, std::filesystem::perms(0644));
    hdf5_store store(f.file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume});
    BOOST_TEST(store.snapshot_step(0) == 5);
}
