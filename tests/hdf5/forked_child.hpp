// Running part of a test in a forked child process, with what it has to say sent back through a pipe
// (tests only). For what must happen in another process: racing a second creator, dropping privileges,
// lowering a resource limit, without changing the test process itself.
#pragma once

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

namespace remat::test {

/// A child process started by fork(); `text` comes back when it ends.
class forked_child {
public:
    /// Forks; the child runs `body()` (which returns a std::string) and sends the text back, or
    /// "uncaught: <what>" when it throws, then ends with _exit (no atexit handlers of the test run).
    template <class F>
    explicit forked_child(F&& body)
    {
        int fds[2];
        if (::pipe(fds) != 0)
            throw std::runtime_error("pipe failed");
        std::fflush(nullptr);
        pid_ = ::fork();
        if (pid_ < 0)
            throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::close(fds[0]);
            std::string text;
            try {
                text = std::forward<F>(body)();
            } catch (const std::exception& e) {
                text = std::string("uncaught: ") + e.what();
            }
            for (std::size_t at = 0; at < text.size();) {
                const ssize_t n = ::write(fds[1], text.data() + at, text.size() - at);
                if (n <= 0)
                    break;
                at += static_cast<std::size_t>(n);
            }
            ::_exit(0);
        }
        ::close(fds[1]);
        read_fd_ = fds[0];
    }
    ~forked_child()
    {
        if (pid_ > 0)
            (void)wait();
    }
    forked_child(const forked_child&) = delete;
    forked_child& operator=(const forked_child&) = delete;

    /// Waits for the child to end; what it sent back.
    std::string wait()
    {
        std::string text;
        char buffer[4096];
        ssize_t n = 0;
        while ((n = ::read(read_fd_, buffer, sizeof buffer)) > 0)
            text.append(buffer, static_cast<std::size_t>(n));
        ::close(read_fd_);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            text += " (the child did not end normally: status " + std::to_string(status) + ")";
        return text;
    }

private:
    pid_t pid_ = -1;
    int read_fd_ = -1;
};

/// A pipe one process writes a byte into to release others waiting on it.
class start_signal {
public:
    start_signal()
    {
        if (::pipe(fds_) != 0)
            throw std::runtime_error("pipe failed");
    }
    ~start_signal()
    {
        close_end(0);
        close_end(1);
    }
    start_signal(const start_signal&) = delete;
    start_signal& operator=(const start_signal&) = delete;

    /// In a waiting process: blocks until released (a byte, or the writing end closed everywhere).
    void wait()
    {
        close_end(1);
        char c = 0;
        (void)::read(fds_[0], &c, 1);
    }
    /// Releases `n` waiting processes at once.
    void release(int n)
    {
        const std::string bytes(static_cast<std::size_t>(n), 'g');
        (void)::write(fds_[1], bytes.data(), bytes.size());
    }
    /// Releases every process waiting now or later (closes this process's writing end).
    void release_all() { close_end(1); }

private:
    void close_end(int which)
    {
        if (fds_[which] >= 0)
            ::close(std::exchange(fds_[which], -1));
    }
    int fds_[2] = {-1, -1};
};

} // namespace remat::test
