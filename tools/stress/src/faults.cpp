#include "faults.hpp"

#include "remat/hdf5_internal/fault_hook.hpp"

#include "remat/error.hpp"
#include "remat/hdf5/inspect.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace remat::stress {
namespace {

std::uint64_t transfers_of(const run_report& r)
{
    return r.stores + r.restores;
}

// The file must open, and every snapshot it calls complete must re-read and match its checksum (what
// `remat inspect --verify` checks), except the one damaged on purpose. "" or what is wrong.
std::string verify_file(const std::filesystem::path& file, slot_t damaged_slot = -1, step_t damaged_step = -1)
{
    try {
        for (const hdf5_snapshot_info& s : hdf5_inspect(file, true).snapshots) {
            if (s.status != hdf5_snapshot_status::damaged)
                continue;
            if (s.slot == damaged_slot && s.step == damaged_step)
                continue;
            return "remat inspect --verify: " + s.dataset + " is damaged: " + s.problem;
        }
    } catch (const std::exception& e) {
        return std::string("remat inspect --verify cannot read the file: ") + e.what();
    }
    return {};
}

// A clean error leaves no temporary file beside the snapshot file.
std::string temporaries_left(const std::filesystem::path& file)
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(file.parent_path(), ec))
        if (entry.path().filename().string().find(".remat-new-") != std::string::npos)
            return "a temporary file was left: " + entry.path().string();
    return {};
}

// The next run on the same file, after the fault: it must give the correct gradient.
std::string next_run(const round_setup& setup, capped_memory& memory, std::uint64_t reference, fault_result& r,
                     bool resume = false)
{
    try {
        const tested_run t = tested_gradient(setup, memory, {.resume = resume});
        r.transfers += transfers_of(t.report);
        if (resume) {
            r.forward_steps_saved = t.forward_steps_saved;
            r.resumed_from = t.resumed ? t.resumed_from : -1;
        }
        if (gradient_hash(t.g) != reference)
            return std::string(resume ? "the resumed" : "the next") + " run's gradient differs from the reference";
    } catch (const std::exception& e) {
        return std::string(resume ? "the resumed" : "the next") + " run failed: " + e.what();
    }
    return {};
}

// The message of an exception and of those nested in it.
std::string full_message(const std::exception& e)
{
    std::string m = e.what();
    try {
        std::rethrow_if_nested(e);
    } catch (const std::exception& inner) {
        m += " <- " + full_message(inner);
    } catch (...) {
        m += " <- a non-standard exception";
    }
    return m;
}

// Runs the tested round in this process; the outcome: "correct gradient", "WRONG gradient" or the
// error's message (with `expected` telling whether that error is the clear one this fault should give).
struct in_process_outcome {
    bool correct = false;
    bool clear_error = false;
    std::string text;
};

template <class Expected>
in_process_outcome run_in_process(const round_setup& setup, capped_memory& memory, const round_hooks& hooks,
                                  std::uint64_t reference, fault_result& r, Expected&& expected)
{
    in_process_outcome o;
    try {
        const tested_run t = tested_gradient(setup, memory, hooks);
        r.transfers += transfers_of(t.report);
        o.correct = gradient_hash(t.g) == reference;
        o.text = o.correct ? "correct gradient" : "WRONG gradient";
    } catch (const std::exception& e) {
        o.text = full_message(e);
        o.clear_error = expected(e);
    }
    return o;
}

// Flips one byte of the file at `offset` through a descriptor of its own: the disk then holds other
// bytes than the store wrote.
bool flip_byte(const std::filesystem::path& file, std::uint64_t offset)
{
    const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char b = 0;
    bool ok = ::pread(fd, &b, 1, static_cast<off_t>(offset)) == 1;
    b ^= 0x5a;
    ok = ok && ::pwrite(fd, &b, 1, static_cast<off_t>(offset)) == 1 && ::fdatasync(fd) == 0;
    ::close(fd);
    return ok;
}

struct corrupting_hook final : detail::hdf5_fault_hook {
    std::filesystem::path file;
    int commits_before = 1; // corrupt the commit after this many
    std::atomic<int> commits{0};
    std::atomic<bool> done{false};
    slot_t slot = -1;
    step_t step = -1;
    void committed(slot_t s, step_t k, std::uint64_t offset, std::uint64_t bytes) override
    {
        if (done || commits++ < commits_before || bytes == 0)
            return;
        if (flip_byte(file, offset + bytes / 2)) {
            slot = s;
            step = k;
            done = true;
        }
    }
};

struct eio_hook final : detail::hdf5_fault_hook {
    int reads_before = 0; // fail the read after this many
    std::atomic<int> reads{0};
    std::atomic<bool> done{false};
    int before_transfer(bool write, slot_t, step_t, std::uint64_t, std::size_t) override
    {
        if (write || done || reads++ < reads_before)
            return 0;
        done = true;
        return EIO;
    }
};

// A child process runs the tested round; `prepare` runs in it first (limits), `trigger` is given to the
// round's hooks and writes a byte to the pipe when the moment to kill has come. Returns the child's wait
// status, and its one-line outcome (empty when it was killed).
struct child_outcome {
    int status = 0;
    bool killed = false;
    std::string text;
};

template <class Prepare>
child_outcome run_child(const round_setup& setup, capped_memory& memory, std::uint64_t reference, Prepare&& prepare,
                        bool kill_in_forward, step_t kill_at, int kill_delay_us)
{
    int to_parent[2];
    if (::pipe(to_parent) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::close(to_parent[0]);
        std::string text;
        try {
            prepare();
            bool signalled = false;
            auto signal_parent = [&](step_t k) {
                if (!signalled && k == kill_at) {
                    signalled = true;
                    (void)!::write(to_parent[1], "K", 1);
                }
            };
            round_hooks hooks;
            if (kill_at >= 0) {
                if (kill_in_forward)
                    hooks.on_forward = signal_parent;
                else
                    hooks.on_adjoint = signal_parent;
            }
            const tested_run t = tested_gradient(setup, memory, hooks);
            text = gradient_hash(t.g) == reference ? "=correct gradient" : "=WRONG gradient";
        } catch (const std::exception& e) {
            text = "!" + full_message(e);
        }
        (void)!::write(to_parent[1], text.data(), text.size());
        ::_exit(0);
    }
    ::close(to_parent[1]);
    child_outcome o;
    std::string received;
    char buffer[4096];
    bool kill_sent = false;
    for (;;) {
        const ssize_t n = ::read(to_parent[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        received.append(buffer, static_cast<std::size_t>(n));
        if (!kill_sent && kill_at >= 0 && !received.empty() && received.front() == 'K') {
            std::this_thread::sleep_for(std::chrono::microseconds(kill_delay_us));
            ::kill(pid, SIGKILL);
            kill_sent = true;
        }
    }
    ::close(to_parent[0]);
    while (::waitpid(pid, &o.status, 0) < 0 && errno == EINTR) {
    }
    o.killed = WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGKILL;
    if (!received.empty() && received.front() == 'K')
        received.erase(0, 1);
    o.text = received;
    return o;
}

} // namespace

const char* to_string(fault_kind k) noexcept
{
    switch (k) {
    case fault_kind::disk_full:
        return "disk_full";
    case fault_kind::corrupt_snapshot:
        return "corrupt_snapshot";
    case fault_kind::read_eio:
        return "read_eio";
    case fault_kind::kill_forward:
        return "kill_forward";
    case fault_kind::kill_reverse:
        return "kill_reverse";
    case fault_kind::user_exception:
        return "user_exception";
    case fault_kind::out_of_memory:
        return "out_of_memory";
    }
    return "unknown";
}

fault_result run_fault(fault_kind kind, const round_setup& given, capped_memory& memory, std::uint64_t reference,
                       std::mt19937_64& random)
{
    // A child of fork() cannot use the CUDA context its parent made (CUDA does not support fork after it is
    // initialised: every call fails with an initialization error), so the faults that run in a child, and
    // the resumed run after them, which must plan as the child did, keep no snapshots in GPU memory.
    round_setup setup = given;
    if (kind == fault_kind::disk_full || kind == fault_kind::kill_forward || kind == fault_kind::kill_reverse)
        setup.device_slots = 0;
    const auto start = std::chrono::steady_clock::now();
    fault_result r;
    r.kind = kind;
    std::string problem;
    slot_t damaged_slot = -1;
    step_t damaged_step = -1;
    bool resume = false;
    auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
    };

    switch (kind) {
    case fault_kind::disk_full: {
        // The file may grow to a few snapshots only: the disk fills during the forward sweep.
        const auto room = std::max<std::int64_t>(1, planned_disk_slots(setup) / 2);
        const auto limit = static_cast<rlim_t>(uniform(1, room) * static_cast<std::int64_t>(setup.state_bytes) +
                                               (std::int64_t{1} << 20));
        const child_outcome c = run_child(
            setup, memory, reference,
            [&] {
                std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of death
                const rlimit l{limit, limit};
                if (::setrlimit(RLIMIT_FSIZE, &l) != 0)
                    throw std::runtime_error("setrlimit(RLIMIT_FSIZE) failed");
            },
            true, -1, 0);
        r.outcome = c.text.empty() ? "the child died" : c.text.substr(1);
        r.injected = c.text.find("File too large") != std::string::npos;
        if (!WIFEXITED(c.status))
            problem = "the child did not exit normally (status " + std::to_string(c.status) + ")";
        else if (c.text.empty() || (c.text[0] == '!' && !r.injected) || c.text == "=WRONG gradient")
            problem = "not a clear error: " + r.outcome;
        break;
    }
    case fault_kind::corrupt_snapshot: {
        corrupting_hook hook;
        hook.file = setup.file;
        hook.commits_before = static_cast<int>(uniform(0, 1));
        const in_process_outcome o =
            run_in_process(setup, memory, {.disk_faults = &hook}, reference, r, [](const std::exception& e) {
                return dynamic_cast<const integrity_error*>(&e) != nullptr &&
                       std::string(e.what()).find("checksum mismatch") != std::string::npos;
            });
        r.injected = hook.done;
        r.outcome = o.text;
        damaged_slot = hook.slot;
        damaged_step = hook.step;
        if (!o.correct && !o.clear_error)
            problem = "not a clear error: " + o.text;
        break;
    }
    case fault_kind::read_eio: {
        eio_hook hook;
        hook.reads_before = static_cast<int>(uniform(0, 1));
        const in_process_outcome o =
            run_in_process(setup, memory, {.disk_faults = &hook}, reference, r, [](const std::exception& e) {
                return dynamic_cast<const io_error*>(&e) != nullptr &&
                       std::string(e.what()).find("Input/output error") != std::string::npos;
            });
        r.injected = hook.done;
        r.outcome = o.text;
        if (!o.correct && !o.clear_error)
            problem = "not a clear error: " + o.text;
        break;
    }
    case fault_kind::kill_forward:
    case fault_kind::kill_reverse: {
        const bool forward = kind == fault_kind::kill_forward;
        const step_t at = forward ? uniform(setup.steps / 4, 3 * setup.steps / 4) : uniform(1, setup.steps - 2);
        const child_outcome c =
            run_child(setup, memory, reference, [] {}, forward, at, static_cast<int>(uniform(0, 3000)));
        r.injected = c.killed;
        r.outcome = c.killed ? "killed (SIGKILL) at " + std::string(forward ? "forward" : "adjoint") + " step " +
                                   std::to_string(at) + " or soon after"
                             : "the child was not killed: " + c.text;
        if (!c.killed && c.text != "=correct gradient")
            problem = "the child was neither killed nor correct: " + c.text;
        resume = forward;
        break;
    }
    case fault_kind::user_exception: {
        const step_t at = uniform(1, setup.steps - 2);
        round_hooks hooks;
        hooks.on_adjoint = [at](step_t k) {
            if (k == at)
                throw std::runtime_error("injected user failure in adjoint step " + std::to_string(k));
        };
        const in_process_outcome o = run_in_process(setup, memory, hooks, reference, r, [at](const std::exception& e) {
            const auto* s = dynamic_cast<const step_error*>(&e);
            return s != nullptr && s->step() == at && s->phase() == step_phase::adjoint;
        });
        r.injected = !o.correct;
        r.outcome = o.text;
        if (!o.clear_error)
            problem = "not the step_error of adjoint step " + std::to_string(at) + ": " + o.text;
        break;
    }
    case fault_kind::out_of_memory: {
        // Room for a few RAM slots only: the next slot finds no memory.
        const std::uint64_t saved = memory.refusals();
        const std::uint64_t room = static_cast<std::uint64_t>(uniform(0, 2)) * setup.state_bytes;
        capped_memory short_memory(room);
        const in_process_outcome o = run_in_process(setup, short_memory, {}, reference, r, [](const std::exception& e) {
            return dynamic_cast<const capacity_error*>(&e) != nullptr &&
                   std::string(e.what()).find("out of memory") != std::string::npos;
        });
        r.injected = short_memory.refusals() > 0;
        (void)saved;
        r.outcome = o.text;
        if (!o.correct && !o.clear_error)
            problem = "not a clear error: " + o.text;
        break;
    }
    }
    if (problem.empty())
        problem = verify_file(setup.file, damaged_slot, damaged_step);
    if (problem.empty())
        problem = temporaries_left(setup.file);
    if (problem.empty())
        problem = next_run(setup, memory, reference, r, resume);
    if (problem.empty() && !r.injected)
        problem = "the fault did not happen";
    r.problem = problem;
    r.survived = problem.empty();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace remat::stress
