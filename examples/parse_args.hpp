// Positional arguments of the examples (burgers_budget, disk_gradient, manual_loop): the whole text, and no more,
// in range, or remat::argument_error naming the argument (report_errors.hpp turns it into one line and exit
// 2). std::stoll and friends took "10x" as 10, wrapped "-1" points into 2^64 - 1 and let a negative, NaN or
// infinite percentage reach a conversion to an integer.
//
//     const remat::step_t steps = argc > 1 ? remat::examples::whole_number("steps", argv[1], 2) : 10'000;
#pragma once

#include <remat/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace remat::examples {

/// Refuses arguments past the first `count` (they were ignored in silence).
inline void at_most_arguments(int argc, char** argv, int count)
{
    if (argc > count + 1)
        throw argument_error("unexpected argument '" + std::string(argv[count + 1]) + "'");
}

/// `text` as a whole number >= `least`.
inline long long whole_number(const std::string& name, const char* text, long long least)
{
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < least)
        throw argument_error(name + " wants a whole number >= " + std::to_string(least) + ", got '" + text + "'");
    return v;
}

/// `text` as a finite number > 0.
inline double positive_number(const std::string& name, const char* text)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(v) || v <= 0)
        throw argument_error(name + " wants a number > 0, got '" + text + "'");
    return v;
}

} // namespace remat::examples
