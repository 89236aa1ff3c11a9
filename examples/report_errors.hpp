// How the examples end on an error, as the remat tool does: one line on stderr ("disk_gradient: ...") and
// a non-zero exit, never an uncaught exception (std::terminate, SIGABRT). Exit 2 for a bad argument, 1 for
// a failure while running (a full disk, an unwritable path, damaged snapshots).
//
//     int main(int argc, char** argv)
//     {
//         return remat::examples::report_errors("disk_gradient", [&] { return run(argc, argv); });
//     }
#pragma once

#include <remat/error.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

namespace remat::examples {

/// `body()`'s exit status, or, when it throws, the one line on stderr and the exit status above.
template <class Body>
int report_errors(const char* program, Body&& body) noexcept
{
    const auto say = [program](const std::string& what, int status) {
        std::string line = what;
        for (char& c : line)
            if (c == '\n')
                c = ' ';
        std::fprintf(stderr, "%s: %s\n", program, line.c_str());
        return status;
    };
    try {
        return body();
    } catch (const remat::argument_error& e) {
        return say(e.what(), 2);
    } catch (const std::invalid_argument& e) { // std::stoll and friends on an argument that is no number
        return say(std::string("an argument is not a number (") + e.what() + ")", 2);
    } catch (const std::out_of_range& e) {
        return say(std::string("an argument is out of range (") + e.what() + ")", 2);
    } catch (const std::exception& e) {
        return say(e.what(), 1);
    } catch (...) {
        return say("unknown error", 1);
    }
}

} // namespace remat::examples
