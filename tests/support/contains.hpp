// Whether a text (an error message, a report, a tool's output) holds a part (tests only; std::string's own
// contains() is C++23).
#pragma once

#include <string_view>

namespace remat::test {

inline bool contains(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

} // namespace remat::test
