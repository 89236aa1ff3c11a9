// Two processes creating the same snapshot file at the same moment (issue 37): exactly one succeeds, the
// other is refused with an io_error naming the file, and the file at the path is the winner's, so what
// the winner writes is what a resume finds. Before the fix both were accepted (in 57 of 60 such trials on the
// development VM), and one of them then wrote into a file no longer at the path.
#define BOOST_TEST_MODULE hdf5_create_race
#include <boost/test/unit_test.hpp>

#include "forked_child.hpp"
#include "hdf5_test_support.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"

#include <string>
#include <vector>

using namespace remat;
using remat::test::forked_child;
using remat::test::pattern_bytes;
using remat::test::scratch_dir;
using remat::test::start_signal;
using remat::test::view;

namespace {

constexpr std::size_t snapshot_bytes = 4096;

step_t step_of(int creator)
{
    return 100 + creator;
}

// Lines from several processes through one pipe (each written at once: shorter than PIPE_BUF).
class verdicts {
public:
    verdicts()
    {
        if (::pipe(fds_) != 0)
            throw std::runtime_error("pipe failed");
    }
    ~verdicts()
    {
        ::close(fds_[0]);
        ::close(fds_[1]);
    }
    verdicts(const verdicts&) = delete;
    verdicts& operator=(const verdicts&) = delete;

    void send(std::string line)
    {
        line = line.substr(0, 2000) + "\n";
        (void)::write(fds_[1], line.data(), line.size());
    }
    /// The next `n` lines, in the order they arrived.
    std::vector<std::string> receive(int n)
    {
        std::vector<std::string> lines;
        std::string pending;
        char c = 0;
        while (static_cast<int>(lines.size()) < n && ::read(fds_[0], &c, 1) == 1) {
            if (c != '\n') {
                pending += c;
                continue;
            }
            lines.push_back(std::move(pending));
            pending.clear();
        }
        return lines;
    }

private:
    int fds_[2] = {-1, -1};
};

// One creator: waits for `go`, creates the store at `file`, writes its own x_k into slot 0, says
// "<creator> won", and keeps the store open until `done`, which comes once both creators have spoken (so
// the other one cannot find the file already closed, and replace it, as a creator coming later may). A
// refusal is "<creator> lost: <kind>: <message>".
std::string create(const std::filesystem::path& file, int creator, start_signal& go, start_signal& done, verdicts& said)
{
    const std::string who = std::to_string(creator);
    go.wait();
    try {
        hdf5_store store(file, level_capacity{2});
        const step_t k = step_of(creator);
        store.write(0, k, view(pattern_bytes(static_cast<std::uint64_t>(k), snapshot_bytes)));
        said.send(who + " won");
        done.wait();
    } catch (const io_error& e) {
        said.send(who + " lost: io_error: " + e.what());
        done.wait();
    } catch (const std::exception& e) {
        said.send(who + " lost: not an io_error: " + e.what());
        done.wait();
    }
    return {};
}

// Races two creators `trials` times, on a new path or over an existing remat file; the failures seen.
std::vector<std::string> race(int trials, bool existing)
{
    std::vector<std::string> failures;
    scratch_dir dir;
    for (int t = 0; t < trials; ++t) {
        const auto file = dir / ("race-" + std::to_string(t) + ".h5");
        if (existing) {
            hdf5_store old(file, level_capacity{2});
            old.write(1, 7, view(pattern_bytes(7, snapshot_bytes)));
        }
        start_signal go, done;
        verdicts channel;
        std::string said[2];
        {
            forked_child first([&] { return create(file, 0, go, done, channel); });
            forked_child second([&] { return create(file, 1, go, done, channel); });
            go.release(2);
            for (const std::string& line : channel.receive(2))
                said[line[0] == '1' ? 1 : 0] = line.substr(2);
            done.release_all();
            for (const std::string& trouble : {first.wait(), second.wait()})
                if (!trouble.empty())
                    failures.push_back("a creator: " + trouble);
        }
        const int won = (said[0] == "won" ? 1 : 0) + (said[1] == "won" ? 1 : 0);
        const std::string trial = "trial " + std::to_string(t) + (existing ? " (over a file)" : " (new path)");
        if (won != 1) {
            failures.push_back(trial + ": " + std::to_string(won) + " creators won (" + said[0] + " | " + said[1] +
                               ")");
            continue;
        }
        const int winner = said[0] == "won" ? 0 : 1;
        const std::string& loser = said[1 - winner];
        BOOST_TEST_MESSAGE(trial + ": " + loser);
        if (loser.rfind("lost: io_error: ", 0) != 0 || loser.find(file.string()) == std::string::npos)
            failures.push_back(trial + ": the loser's refusal is not an io_error naming the file: " + loser);
        // The file at the path is the winner's: its snapshot, and not the old file's.
        hdf5_store again(file, level_capacity{2}, {.mode = hdf5_store::open_mode::resume});
        const step_t k = step_of(winner);
        if (again.snapshot_step(0) != k || again.snapshot_step(1) != -1) {
            failures.push_back(trial + ": the file holds x_" + std::to_string(again.snapshot_step(0)) +
                               " in slot 0 and x_" + std::to_string(again.snapshot_step(1)) + " in slot 1, not the " +
                               "winner's x_" + std::to_string(k) + " alone");
            continue;
        }
        std::vector<std::byte> back(snapshot_bytes);
        again.read(0, k, view(back));
        if (back != pattern_bytes(static_cast<std::uint64_t>(k), snapshot_bytes))
            failures.push_back(trial + ": the winner's snapshot reads back other bytes");
    }
    return failures;
}

} // namespace

BOOST_AUTO_TEST_CASE(two_creators_of_a_new_file_one_wins)
{
    const std::vector<std::string> failures = race(20, false);
    BOOST_TEST(failures.empty());
    for (const std::string& f : failures)
        BOOST_ERROR(f);
}

BOOST_AUTO_TEST_CASE(two_creators_replacing_a_file_one_wins)
{
    const std::vector<std::string> failures = race(20, true);
    BOOST_TEST(failures.empty());
    for (const std::string& f : failures)
        BOOST_ERROR(f);
}
